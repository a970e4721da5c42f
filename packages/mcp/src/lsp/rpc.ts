/**
 * The JSON-RPC side of a language server: Content-Length framed messages over the child's stdin and stdout.
 *
 * Why not vscode-jsonrpc: crow-mcp needs a dozen messages of it (initialize, the document notifications, a pull of
 * diagnostics, the server's few requests to the client, shutdown), the framing is twenty lines, and every module the
 * toolserver bundles is paid at each of its starts. This is the whole client.
 */
import type { Readable, Writable } from "node:stream";

/** A request the server answered with an error (`code` as JSON-RPC gives it; -32601: it has no such method). */
export class RpcError extends Error {
  constructor(
    message: string,
    readonly code: number,
  ) {
    super(message);
  }
}

type Handler = (params: unknown) => unknown;

interface Pending {
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
}

/** Upper bound of one message from a server (a diagnostics list of a huge file stays far below it). */
const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

/** One framed JSON-RPC connection over a server's stdout (`input`) and stdin (`output`). */
export class RpcConnection {
  private buffer: Buffer = Buffer.alloc(0);
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly notificationHandlers = new Map<string, Handler>();
  private readonly requestHandlers = new Map<string, Handler>();
  private closedWith: Error | undefined;

  constructor(
    input: Readable,
    private readonly output: Writable,
  ) {
    input.on("data", (chunk: Buffer) => this.receive(chunk));
    input.on("close", () => this.close(new Error("the language server closed its output")));
    output.on("error", (error: Error) => this.close(error));
  }

  /** Handles the server's notification `method` (others are ignored). */
  onNotification(method: string, handler: Handler): void {
    this.notificationHandlers.set(method, handler);
  }

  /** Answers the server's request `method` with what `handler` returns (others: null, which every server accepts). */
  onRequest(method: string, handler: Handler): void {
    this.requestHandlers.set(method, handler);
  }

  /** Sends a request; resolves to its result, rejects with an {@link RpcError} or when the connection ends. */
  request(method: string, params?: unknown): Promise<unknown> {
    if (this.closedWith) return Promise.reject(this.closedWith);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.send({ jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) });
    });
  }

  notify(method: string, params?: unknown): void {
    if (this.closedWith) return;
    this.send({ jsonrpc: "2.0", method, ...(params === undefined ? {} : { params }) });
  }

  /** Fails every pending request with `error`; later requests fail at once. Idempotent. */
  close(error: Error): void {
    if (this.closedWith) return;
    this.closedWith = error;
    for (const waiter of this.pending.values()) waiter.reject(error);
    this.pending.clear();
  }

  private send(message: Record<string, unknown>): void {
    const body = Buffer.from(JSON.stringify(message), "utf8");
    this.output.write(Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`, "ascii"), body]));
  }

  private receive(chunk: Buffer): void {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    for (;;) {
      const headerEnd = this.buffer.indexOf("\r\n\r\n");
      if (headerEnd < 0) return;
      const length = /content-length:\s*(\d+)/i.exec(this.buffer.subarray(0, headerEnd).toString("ascii"))?.[1];
      if (length === undefined || Number(length) > MAX_MESSAGE_BYTES) {
        this.close(new Error("the language server sent a message without a valid Content-Length"));
        this.buffer = Buffer.alloc(0);
        return;
      }
      const start = headerEnd + 4;
      const end = start + Number(length);
      if (this.buffer.length < end) return;
      const body = this.buffer.subarray(start, end).toString("utf8");
      this.buffer = this.buffer.subarray(end);
      try {
        this.dispatch(JSON.parse(body) as Record<string, unknown>);
      } catch {
        // A message that is not JSON is dropped; the next one starts at its own header.
      }
    }
  }

  private dispatch(message: Record<string, unknown>): void {
    const { id, method } = message;
    if (typeof method === "string") {
      if (id === undefined) {
        this.notificationHandlers.get(method)?.(message.params);
        return;
      }
      const handler = this.requestHandlers.get(method);
      let result: unknown = null;
      try {
        result = handler ? handler(message.params) : null;
      } catch {
        result = null;
      }
      this.send({ jsonrpc: "2.0", id, result: result ?? null });
      return;
    }
    if (typeof id !== "number") return;
    const waiter = this.pending.get(id);
    if (!waiter) return;
    this.pending.delete(id);
    const error = message.error as { message?: unknown; code?: unknown } | undefined;
    if (error) {
      waiter.reject(new RpcError(String(error.message ?? "request failed"), Number(error.code ?? 0)));
    } else {
      waiter.resolve(message.result);
    }
  }
}
