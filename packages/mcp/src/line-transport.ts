/**
 * MCP on a stream socket in stdio's framing: one JSON-RPC message per line. How crow's agent and its shared crow-mcp
 * speak over the private unix socket (`crow-mcp --socket`): one connection is one MCP session, which lives as long as
 * the connection; the session's working directory rides on its `initialize` (`_meta["crow/cwd"]`).
 *
 * Why not Streamable HTTP there (it was, until this): node:http's client and server cost a fresh process ~1 ms of CPU
 * per request on each side for their first dozens of requests (a cold request over the socket: ~1.3 ms of client CPU
 * against ~0.3 ms for a line), and a private socket needs none of what HTTP adds (sessions by header, resumable
 * streams, auth). Lines need no session ids either: the connection is the session, and its end (a closed agent
 * session, a dead agent) ends the shell with it.
 *
 * Both sides use this class; it knows nothing of sessions or MCP beyond the message shape, and it loads nothing but
 * types, so the socket front can read a first message before the MCP SDK and the tools are loaded. crow-mcp on stdio
 * uses it too ({@link LineTransport} over stdin and stdout).
 *
 * A line over the limit does not end the connection: it is skipped as it arrives (memory stays bounded), the error
 * handler hears what was dropped and why, a request whose id can be read gets an error answer, and a response whose
 * id can be read becomes an error response here, so the call waiting for it fails with the reason.
 */
import type { Socket } from "node:net";
import type { Readable, Writable } from "node:stream";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { BoundedLineSplitter, type OversizeLine } from "./bounded-lines.js";
import { errorText } from "./error-text.js";
import { describeOversize, oversizeError, oversizeLog } from "./oversize-reply.js";

export { BoundedLineSplitter, type OversizeLine } from "./bounded-lines.js";
export { describeOversize, oversizeError, oversizeLog } from "./oversize-reply.js";

/** Longest line accepted on the socket (a `write` of a big file is the largest message an agent sends). */
export const MAX_LINE_BYTES = 64 * 1024 * 1024;
/** Longest line accepted on stdio: what the MCP SDK's stdio transport accepted, which MCP clients expect. */
export const STDIO_MAX_LINE_BYTES = 10 * 1024 * 1024;

/** Key of `initialize`'s `params._meta` that gives a session of the shared crow-mcp its working directory. */
export const CWD_META_KEY = "crow/cwd";

/**
 * Key of `initialize`'s `params._meta` that proves a connection to the shared crow-mcp comes from the agent that
 * started it: the secret that agent handed crow-mcp on its stdin (`--secret-stdin`), which no sandboxed shell sees.
 */
export const SECRET_META_KEY = "crow/secret";

function isMessage(value: unknown): value is JSONRPCMessage {
  return typeof value === "object" && value !== null && (value as { jsonrpc?: unknown }).jsonrpc === "2.0";
}

export interface LineTransportOptions {
  /** The longest line accepted, in bytes. */
  limit: number;
  /** Ends the connection (after the last message was written). */
  end: () => void;
}

/** MCP over one JSON-RPC message per line, on any pair of streams. */
export class LineTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private readonly lines: BoundedLineSplitter;
  /** While held, received messages wait here (see {@link hold}). */
  private held: JSONRPCMessage[] | undefined;
  private closed = false;
  /** When a message last went either way (Date.now()). */
  lastActivity = Date.now();
  /** Requests received and not answered yet (the server side's view: a session running a call is not idle). */
  unanswered = 0;

  constructor(
    input: Readable,
    private readonly output: Writable,
    private readonly options: LineTransportOptions,
  ) {
    this.lines = new BoundedLineSplitter(
      options.limit,
      (line) => this.deliver(line.toString("utf8")),
      (line) => this.oversize(line),
    );
    input.on("data", (chunk: Buffer) => this.receive(chunk));
    // An error is followed by "close", which ends the transport.
    input.on("error", (error) => this.onerror?.(error));
    if ((output as unknown) !== input) output.on("error", (error) => this.onerror?.(error));
    input.on("close", () => this.finish());
  }

  async start(): Promise<void> {}

  /**
   * Keeps received messages back until {@link release}: the socket front reads a session's `initialize` before its
   * server exists, and what comes while the server connects must reach it after that `initialize`, in order.
   */
  hold(): void {
    this.held ??= [];
  }

  /** Delivers `first` (if given) and then every message held back, and stops holding. */
  release(first?: JSONRPCMessage): void {
    const held = this.held ?? [];
    this.held = undefined;
    for (const message of first ? [first, ...held] : held) this.onmessage?.(message);
  }

  private receive(chunk: Buffer): void {
    if (this.closed) return;
    this.lines.push(chunk);
  }

  /** A line over the limit was skipped: say so, and answer it (or stand in for it) when its id is known. */
  private oversize(line: OversizeLine): void {
    if (this.closed) return;
    const message = describeOversize(line);
    this.onerror?.(new Error(oversizeLog(line, message)));
    const error = oversizeError(line, message) as JSONRPCMessage | undefined;
    if (!error) return;
    if (message.kind === "request") {
      // Counted as received, so its answer does not count against another request still running.
      this.unanswered++;
      void this.send(error);
    } else if (this.held) this.held.push(error);
    else this.onmessage?.(error);
  }

  private deliver(line: string): void {
    // A message before this one may have closed the connection (refuse); the rest of the chunk is not for anyone.
    if (this.closed) return;
    if (line.trim() === "") return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch (error) {
      this.onerror?.(new Error(`a line that is not JSON (${errorText(error)}): ${line.slice(0, 200)}`));
      return;
    }
    if (!isMessage(parsed)) {
      this.onerror?.(new Error(`a line that is not a JSON-RPC message: ${line.slice(0, 200)}`));
      return;
    }
    this.lastActivity = Date.now();
    if ("method" in parsed && "id" in parsed) this.unanswered++;
    // A cancelled request gets no answer (the MCP SDK sends none once its handler is aborted).
    else if ("method" in parsed && parsed.method === "notifications/cancelled" && this.unanswered > 0)
      this.unanswered--;
    if (this.held) this.held.push(parsed);
    else this.onmessage?.(parsed);
  }

  /** Writes one message (Node buffers what the socket cannot take yet). */
  send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) return Promise.reject(new Error("Not connected"));
    this.lastActivity = Date.now();
    if (("result" in message || "error" in message) && this.unanswered > 0) this.unanswered--;
    this.output.write(`${JSON.stringify(message)}\n`);
    return Promise.resolve();
  }

  /** Answers `message` (by its id, or null) with a JSON-RPC error saying `text`, then ends the connection. */
  refuse(message: JSONRPCMessage, code: number, text: string): void {
    const id = "id" in message ? message.id : null;
    void this.send({ jsonrpc: "2.0", id, error: { code, message: text } } as JSONRPCMessage).then(() => this.close());
  }

  /** Ends the connection (the other side sees the session end). */
  async close(): Promise<void> {
    this.options.end();
    this.finish();
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    this.held = undefined;
    this.onclose?.();
  }
}

/** {@link LineTransport} on a unix socket connection: one connection is one MCP session. */
export class SocketLineTransport extends LineTransport {
  constructor(socket: Socket) {
    super(socket, socket, { limit: MAX_LINE_BYTES, end: () => socket.end() });
  }
}
