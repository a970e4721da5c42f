/**
 * An MCP client transport over a server process that is already running (the spare crow-mcp, see spare.ts): what the
 * SDK's StdioClientTransport does after its spawn. Messages are newline-delimited JSON on the child's stdin/stdout;
 * `close()` follows the SDK's sequence (end stdin, then SIGTERM, then SIGKILL, 2 s apart).
 */
import type { ChildProcess } from "node:child_process";
import type { Readable } from "node:stream";
import { ReadBuffer, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

const CLOSE_STEP_MS = 2000;

export class ChildProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private readonly buffer = new ReadBuffer();
  private child: ChildProcess | undefined;
  private started = false;

  constructor(
    child: ChildProcess,
    /** The child's stderr (possibly a buffered copy of it). */
    readonly stderr: Readable,
  ) {
    this.child = child;
  }

  get pid(): number | null {
    return this.child?.pid ?? null;
  }

  async start(): Promise<void> {
    if (this.started) throw new Error("ChildProcessTransport already started");
    this.started = true;
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) throw new Error("the server process exited");
    child.once("close", () => {
      this.child = undefined;
      this.onclose?.();
    });
    child.stdin?.on("error", (error) => this.onerror?.(error));
    child.stdout?.on("error", (error) => this.onerror?.(error));
    child.stdout?.on("data", (chunk: Buffer) => {
      try {
        this.buffer.append(chunk);
      } catch (error) {
        this.onerror?.(error as Error);
        this.close().catch(() => {});
        return;
      }
      for (;;) {
        let message: JSONRPCMessage | null;
        try {
          message = this.buffer.readMessage();
        } catch (error) {
          this.onerror?.(error as Error);
          continue;
        }
        if (message === null) break;
        this.onmessage?.(message);
      }
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin) return Promise.reject(new Error("Not connected"));
    return new Promise((resolve) => {
      if (stdin.write(serializeMessage(message))) resolve();
      else stdin.once("drain", resolve);
    });
  }

  async close(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    this.buffer.clear();
    if (!child) return;
    const closed = new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve();
      else child.once("close", () => resolve());
    });
    const step = () => Promise.race([closed, new Promise((resolve) => setTimeout(resolve, CLOSE_STEP_MS).unref())]);
    try {
      child.stdin?.end();
    } catch {
      // already closed
    }
    await step();
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      await step();
    }
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  }
}
