import { errorText } from "@crow/core";
import { LazyJsonSchemaValidator } from "@crow/mcp/process";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { type CallToolResult, ErrorCode, McpError, type Tool } from "@modelcontextprotocol/sdk/types.js";
import { ELICITATION_CAPABILITIES, forwardElicitations, type RunningCall, type SessionUser } from "./elicitation.js";
import type { ServerSpec } from "./servers.js";
import { holdSharedToolserver, type SharedEndpoint, sharedEndpoint } from "./shared.js";
import { SharedSocketTransport } from "./socket-transport.js";

/** How long a server may take to spawn and answer `initialize` before it counts as failed. */
const CONNECT_TIMEOUT_MS = 30_000;
/** How much of a stdio server's stderr is kept for error messages. */
const STDERR_TAIL_CHARS = 2000;

const CLIENT_INFO = { name: "crow", version: "0.1.0" };
/** Errors of a request to the shared crow-mcp that mean its process (or socket) is gone. */
const CONNECTION_LOST = new Set(["ECONNRESET", "ECONNREFUSED", "EPIPE", "ENOENT"]);

/** Options of one tool call on a server. */
export interface CallOptions {
  signal: AbortSignal;
  timeoutMs: number;
  onProgress: (progress: { progress: number; total?: number; message?: string }) => void;
  /** More `_meta` for this call (the user's permission to run it once outside the sandbox). */
  meta?: Record<string, unknown>;
  /** The model's call id (a question the server asks during the call is tied to it). */
  callId?: string;
}

/** A call that did not produce a tool result: cancelled, timed out, or the server went away. */
export class CallFailure extends Error {
  constructor(
    message: string,
    readonly reason: "aborted" | "timeout" | "died" | "error",
  ) {
    super(message);
  }
}

/** Why a startup failed, in words a user can act on (`command not found: foo`). */
function describeStartError(spec: ServerSpec, error: unknown, stderr: string): string {
  const err = error as NodeJS.ErrnoException;
  let message: string;
  if (spec.transport === "stdio" && err.code === "ENOENT") message = `command not found: ${spec.command}`;
  else if (spec.transport === "stdio" && err.code === "EACCES") message = `permission denied running ${spec.command}`;
  else if (spec.transport === "stdio" && err.code === "ENOTDIR") message = `cannot run ${spec.command} in ${spec.cwd}`;
  else if (error instanceof McpError && error.code === ErrorCode.ConnectionClosed && spec.transport === "stdio") {
    message = "the process exited before answering initialize";
  } else if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
    message = `no answer to initialize within ${CONNECT_TIMEOUT_MS / 1000} s`;
  } else {
    const cause = (err.cause as Error | undefined)?.message;
    message = `${errorText(error)}${cause ? ` (${cause})` : ""}`;
  }
  const tail = stderr.trim();
  return tail ? `${message}; its stderr:\n${tail}` : message;
}

/**
 * One MCP server of a session: connects (never throws; a failure is kept in `error`), lists its tools (all pages,
 * refreshed on `tools/list_changed`), runs calls, and reconnects once on the next call after the connection was lost.
 */
export class ServerConnection {
  state: "idle" | "connected" | "failed" | "lost" | "closed" = "idle";
  error: string | undefined;
  tools: Tool[] = [];
  private client: Client | undefined;
  private stdio: StdioClientTransport | undefined;
  /** The shared crow-mcp process this connection's MCP session lives in (built-in only). */
  private shared: SharedEndpoint | undefined;
  private holding = false;
  /** How the shared process ended, once it did while this connection used it. */
  private sharedEnded: string | undefined;
  private stderrTail = "";
  private restarting: Promise<boolean> | undefined;
  /** Tool calls in flight (a server's question during one of them belongs to it). */
  private readonly running = new Set<RunningCall>();

  constructor(
    readonly spec: ServerSpec,
    private readonly onToolsChanged: () => void,
    private readonly onStderr?: (server: string, text: string) => void,
    /** `_meta` for this server's `initialize` and every call (the built-in's sandbox policy), read each time. */
    private readonly meta?: () => Record<string, unknown>,
    /** Where the server's questions to the user go (elicitation); without it the server cannot ask. */
    private readonly user?: SessionUser,
  ) {}

  get name(): string {
    return this.spec.name;
  }

  /** The MCP client while connected (for the server's skills, see mcp-skills.ts). */
  get mcp(): Client | undefined {
    return this.state === "connected" ? this.client : undefined;
  }

  /** Process id of the running stdio server, if any. */
  get pid(): number | undefined {
    if (this.state !== "connected") return undefined;
    return this.shared?.pid ?? this.stdio?.pid ?? undefined;
  }

  /** Connects and lists tools; on failure sets `state: "failed"` and `error`. Resolves to whether it connected. */
  async connect(): Promise<boolean> {
    const spec = this.spec;
    if (spec.transport === "invalid") {
      this.fail(spec.error);
      return false;
    }
    this.stderrTail = "";
    const client = new Client(CLIENT_INFO, {
      capabilities: this.user ? ELICITATION_CAPABILITIES : {},
      // Ajv is built only if a server's tool declares an output schema (Crow's own declare none).
      jsonSchemaValidator: new LazyJsonSchemaValidator(),
      listChanged: {
        tools: {
          onChanged: (error, tools) => {
            if (error || !tools || this.client !== client) return;
            this.tools = tools;
            this.onToolsChanged();
          },
        },
      },
    });
    if (this.user) forwardElicitations(client, spec.name, this.user, () => this.running);
    let transport: Transport;
    try {
      transport = await this.transport();
    } catch (error) {
      this.fail(describeStartError(spec, error, ""));
      return false;
    }
    try {
      await client.connect(transport, { timeout: CONNECT_TIMEOUT_MS });
      const tools: Tool[] = [];
      // A server without the tools capability (one serving only skills or resources) has no tools/list to ask.
      let cursor: string | undefined;
      while (client.getServerCapabilities()?.tools) {
        const page = await client.listTools(cursor ? { cursor } : undefined, { timeout: CONNECT_TIMEOUT_MS });
        tools.push(...page.tools);
        cursor = page.nextCursor;
        if (!cursor) break;
      }
      this.client = client;
      this.stdio = spec.transport === "stdio" ? (transport as StdioClientTransport) : undefined;
      this.sharedEnded = undefined;
      const shared = this.shared;
      if (shared) {
        if (!this.holding) holdSharedToolserver(true);
        this.holding = true;
        // The shared process died: this session's calls in flight fail now (closing the client rejects them), and
        // the next call starts it again in a new MCP session.
        void shared.ended.then((how) => {
          // Its connection may have closed first (the session is already "lost"): the message still says how.
          if (this.client !== client) return;
          this.sharedEnded = how;
          if (this.state !== "connected") return;
          this.state = "lost";
          void client.close().catch(() => {});
        });
      }
      this.tools = tools;
      this.state = "connected";
      this.error = undefined;
      this.onToolsChanged();
      client.onclose = () => {
        // Closed by close() or by a reconnect: nothing to report. Otherwise the server went away.
        if (this.client === client && this.state === "connected") this.state = "lost";
      };
      return true;
    } catch (error) {
      const message = describeStartError(spec, error, this.stderrTail);
      await client.close().catch(() => {});
      this.fail(message);
      return false;
    }
  }

  /**
   * A fresh transport for the spec (the built-in: a new MCP session in the shared crow-mcp, which is started if it is
   * not running); a stdio server's stderr is kept (tail) and passed to `onStderr`. The SDK's transports load on first
   * use: most sessions only ever reach the built-in over its socket, and the HTTP/SSE ones bring an EventSource
   * client and OAuth code along.
   */
  private async transport(): Promise<Transport> {
    const spec = this.spec;
    if (spec.transport === "invalid") throw new Error(spec.error);
    if (spec.transport === "shared") {
      const shared = await sharedEndpoint();
      this.shared = shared;
      return new SharedSocketTransport(shared.socketPath, shared.secret, spec.cwd, this.meta);
    }
    if (spec.transport !== "stdio") {
      const url = new URL(spec.url);
      const requestInit = { headers: spec.headers };
      if (spec.transport === "http") {
        const { StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js");
        return new StreamableHTTPClientTransport(url, { requestInit });
      }
      const { SSEClientTransport } = await import("@modelcontextprotocol/sdk/client/sse.js");
      return new SSEClientTransport(url, { requestInit });
    }
    const { StdioClientTransport } = await import("@modelcontextprotocol/sdk/client/stdio.js");
    const stdio = new StdioClientTransport({
      command: spec.command,
      args: spec.args,
      env: spec.env,
      cwd: spec.cwd,
      stderr: "pipe",
    });
    stdio.stderr?.on("data", (chunk: Buffer) => {
      const text = chunk.toString();
      this.stderrTail = (this.stderrTail + text).slice(-STDERR_TAIL_CHARS);
      this.onStderr?.(spec.name, text);
    });
    return stdio;
  }

  private fail(message: string): void {
    this.state = "failed";
    this.error = message;
    this.tools = [];
    this.onToolsChanged();
  }

  /**
   * Calls a tool. Resolves with the server's result (tool errors included); rejects with a {@link CallFailure} when
   * there is no result. A connection lost earlier is re-established once first.
   */
  async call(name: string, args: Record<string, unknown>, options: CallOptions): Promise<CallToolResult> {
    if (this.state === "lost") {
      // Parallel calls share one restart.
      this.restarting ??= this.reset()
        .then(() => this.connect())
        .finally(() => {
          this.restarting = undefined;
        });
      if (!(await this.restarting)) {
        throw new CallFailure(`MCP server "${this.name}" is down and could not be restarted: ${this.error}`, "died");
      }
    }
    const client = this.client;
    if (this.state !== "connected" || !client) {
      throw new CallFailure(`MCP server "${this.name}" is not available: ${this.error ?? this.state}`, "error");
    }
    // The SDK adds an abort listener to the signal of every request and never removes it: on the turn's signal, shared
    // by every call of the turn, they would pile up (past 10, Node builds a leak warning, formatting the signal; seen in
    // a profile of the first tool rounds). Each call gets its own signal, linked to the turn's while the call runs.
    const call = new AbortController();
    const forward = () => call.abort(options.signal.reason);
    if (options.signal.aborted) call.abort(options.signal.reason);
    else options.signal.addEventListener("abort", forward, { once: true });
    const running: RunningCall = { signal: call.signal, ...(options.callId ? { callId: options.callId } : {}) };
    this.running.add(running);
    try {
      const meta = this.meta || options.meta ? { ...this.meta?.(), ...options.meta } : undefined;
      return (await client.callTool({ name, arguments: args, ...(meta ? { _meta: meta } : {}) }, undefined, {
        signal: call.signal,
        timeout: options.timeoutMs,
        resetTimeoutOnProgress: true,
        onprogress: (p) => {
          options.onProgress({
            progress: p.progress,
            ...(p.total !== undefined ? { total: p.total } : {}),
            ...(p.message !== undefined ? { message: p.message } : {}),
          });
        },
      })) as CallToolResult;
    } catch (error) {
      // The shared crow-mcp killed mid-call shows first as its connection closing (or a socket error), a moment
      // before its exit is seen: wait for that moment, so the error says how it ended.
      const shared = this.shared;
      const code = (error as NodeJS.ErrnoException | undefined)?.code;
      const closed = error instanceof McpError && error.code === ErrorCode.ConnectionClosed;
      if (shared && !options.signal.aborted && (closed || (code !== undefined && CONNECTION_LOST.has(code)))) {
        await Promise.race([shared.ended, new Promise((resolve) => setTimeout(resolve, 1000).unref())]);
      }
      throw this.failure(error, options);
    } finally {
      this.running.delete(running);
      options.signal.removeEventListener("abort", forward);
    }
  }

  private failure(error: unknown, options: CallOptions): CallFailure {
    if (options.signal.aborted) return new CallFailure("Tool call cancelled.", "aborted");
    if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
      return new CallFailure(
        `MCP server "${this.name}" did not answer within ${Math.round(options.timeoutMs / 1000)} s; the call was cancelled.`,
        "timeout",
      );
    }
    const closed = error instanceof McpError && error.code === ErrorCode.ConnectionClosed;
    if (closed || this.state === "lost" || this.client === undefined) {
      // The transport is gone; the next call starts the server again.
      this.state = "lost";
      const tail = this.stderrTail.trim();
      const how = this.sharedEnded ? ` (${this.sharedEnded}).` : tail ? `; its stderr:\n${tail}` : ".";
      return new CallFailure(
        `MCP server "${this.name}" died during the call${how} It will be restarted on the next call.`,
        "died",
      );
    }
    if (error instanceof McpError) {
      return new CallFailure(`MCP server "${this.name}" answered with an error: ${error.message}`, "error");
    }
    // A transport-level failure (e.g. an HTTP server that went away): reconnect on the next call.
    this.state = "lost";
    const cause = ((error as Error).cause as Error | undefined)?.message;
    return new CallFailure(
      `MCP server "${this.name}" could not be reached: ${errorText(error)}${cause ? ` (${cause})` : ""}`,
      "died",
    );
  }

  /** Drops the current client (closing its transport) without changing the reported state. */
  private async reset(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    this.stdio = undefined;
    this.shared = undefined;
    if (this.holding) holdSharedToolserver(false);
    this.holding = false;
    // Closing the client closes its transport: a session of the shared crow-mcp ends with its connection (its shell
    // stops); the process itself serves the others.
    await client?.close().catch(() => {});
  }

  /** Closes the client; a stdio server gets its stdin closed, then SIGTERM, then SIGKILL (the SDK's sequence). */
  async close(): Promise<void> {
    if (this.state === "connected" || this.state === "lost") this.state = "closed";
    this.tools = [];
    this.onToolsChanged();
    await this.reset();
  }
}
