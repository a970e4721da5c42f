/**
 * The MCP client transport to the shared crow-mcp: one connection to its unix socket per MCP session, one JSON-RPC
 * message per line (crow-mcp's line-transport.ts, which both sides use, says why not HTTP). `start` connects;
 * `initialize` carries the session's working directory in `_meta["crow/cwd"]` and the launch's secret in
 * `_meta["crow/secret"]`; closing the transport ends the session
 * on the server (its shell stops).
 */
import { connect } from "node:net";
import { CWD_META_KEY, SECRET_META_KEY, SocketLineTransport } from "@crow/mcp/line-transport";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

export class SharedSocketTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private lines: SocketLineTransport | undefined;

  constructor(
    private readonly socketPath: string,
    /** The secret of this crow-mcp launch, proving the connection is its agent's (`_meta["crow/secret"]`). */
    private readonly secret: string,
    /** The session's working directory (absolute). */
    private readonly cwd: string,
    /** More `_meta` for `initialize` (the session's sandbox policy), read when it is sent. */
    private readonly meta?: () => Record<string, unknown>,
  ) {}

  /** Connects; rejects with the socket's error (ENOENT, ECONNREFUSED: the toolserver is gone). */
  start(): Promise<void> {
    return new Promise((resolve, reject) => {
      const socket = connect(this.socketPath);
      socket.once("error", reject);
      socket.once("connect", () => {
        socket.off("error", reject);
        const lines = new SocketLineTransport(socket);
        lines.onmessage = (message) => this.onmessage?.(message);
        lines.onerror = (error) => this.onerror?.(error);
        lines.onclose = () => this.onclose?.();
        this.lines = lines;
        resolve();
      });
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    if (!this.lines) return Promise.reject(new Error("Not connected"));
    if ("method" in message && message.method === "initialize" && "id" in message) {
      const params = (message.params ?? {}) as { _meta?: Record<string, unknown> };
      return this.lines.send({
        ...message,
        params: {
          ...params,
          _meta: { ...params._meta, ...this.meta?.(), [CWD_META_KEY]: this.cwd, [SECRET_META_KEY]: this.secret },
        },
      } as JSONRPCMessage);
    }
    return this.lines.send(message);
  }

  async close(): Promise<void> {
    if (this.lines) await this.lines.close();
    else this.onclose?.();
  }
}
