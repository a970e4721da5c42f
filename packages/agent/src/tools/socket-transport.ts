/**
 * The MCP client transport to the shared crow-mcp: Streamable HTTP over its unix socket, on node:http directly. Every
 * message is a POST; an answer comes back as JSON or as a server-sent-event stream (progress notifications first, the
 * result last), and an `initialize` answer names the MCP session, sent with every later request. What the SDK's
 * StreamableHTTPClientTransport does over `fetch`, minus what a private socket never needs (auth, reconnecting
 * streams, the standalone GET stream: crow-mcp sends nothing outside a request) and minus web streams and fetch
 * objects, which cost the agent ~2 ms of CPU per tool call.
 */
import { Agent, type ClientRequest, type IncomingMessage, request } from "node:http";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

function isMessage(value: unknown): value is JSONRPCMessage {
  return typeof value === "object" && value !== null && (value as { jsonrpc?: unknown }).jsonrpc === "2.0";
}

export class SocketHttpTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  sessionId?: string;
  private protocolVersion: string | undefined;
  private readonly agent = new Agent({ keepAlive: true });
  private readonly requests = new Set<ClientRequest>();
  private closed = false;

  constructor(
    private readonly socketPath: string,
    /** Headers of every request (the session's `crow-cwd`). */
    private readonly headers: Record<string, string>,
  ) {}

  async start(): Promise<void> {}

  setProtocolVersion(version: string): void {
    this.protocolVersion = version;
  }

  private open(method: string, body: string | undefined, onResponse: (res: IncomingMessage) => void): ClientRequest {
    const req = request(
      {
        agent: this.agent,
        socketPath: this.socketPath,
        method,
        path: "/mcp",
        headers: {
          host: "localhost",
          accept: "application/json, text/event-stream",
          ...(body !== undefined
            ? { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) }
            : {}),
          ...this.headers,
          ...(this.sessionId ? { "mcp-session-id": this.sessionId } : {}),
          ...(this.protocolVersion ? { "mcp-protocol-version": this.protocolVersion } : {}),
        },
      },
      onResponse,
    );
    this.requests.add(req);
    req.once("close", () => this.requests.delete(req));
    req.end(body);
    return req;
  }

  /** Sends a message; resolves once the server accepted it (answers arrive through `onmessage`). */
  send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) return Promise.reject(new Error("Not connected"));
    return new Promise((resolve, reject) => {
      const req = this.open("POST", JSON.stringify(message), (res) => {
        const id = res.headers["mcp-session-id"];
        if (typeof id === "string") this.sessionId = id;
        const status = res.statusCode ?? 0;
        res.setEncoding("utf8");
        if (status >= 400) {
          let text = "";
          res.on("data", (chunk: string) => {
            text += chunk;
          });
          res.on("end", () => reject(new Error(`crow-mcp answered HTTP ${status}: ${text.trim()}`)));
          return;
        }
        resolve();
        if (status === 202 || status === 204) {
          res.resume();
          return;
        }
        if (String(res.headers["content-type"] ?? "").includes("text/event-stream")) this.readEvents(res);
        else this.readJson(res);
      });
      req.once("error", (error) => {
        reject(error);
        this.onerror?.(error);
      });
    });
  }

  private deliver(data: string): void {
    let parsed: unknown;
    try {
      parsed = JSON.parse(data);
    } catch (error) {
      this.onerror?.(error as Error);
      return;
    }
    for (const message of Array.isArray(parsed) ? parsed : [parsed]) {
      if (isMessage(message)) this.onmessage?.(message);
      else this.onerror?.(new Error(`not a JSON-RPC message: ${data.slice(0, 200)}`));
    }
  }

  private readJson(res: IncomingMessage): void {
    let text = "";
    res.on("data", (chunk: string) => {
      text += chunk;
    });
    res.on("end", () => {
      if (text.trim()) this.deliver(text);
    });
  }

  /** Server-sent events: blank-line separated, `data:` lines joined; only `message` events carry MCP messages. */
  private readEvents(res: IncomingMessage): void {
    let buffer = "";
    res.on("data", (chunk: string) => {
      buffer += chunk;
      for (;;) {
        const end = /\r?\n\r?\n/.exec(buffer);
        if (!end) break;
        const block = buffer.slice(0, end.index);
        buffer = buffer.slice(end.index + end[0].length);
        let event = "message";
        const data: string[] = [];
        for (const line of block.split(/\r?\n/)) {
          if (line.startsWith("data:")) data.push(line.slice(line.startsWith("data: ") ? 6 : 5));
          else if (line.startsWith("event:")) event = line.slice(6).trim();
        }
        if (event === "message" && data.length > 0) this.deliver(data.join("\n"));
      }
    });
    res.once("aborted", () => this.onerror?.(new Error("crow-mcp closed the answer stream")));
  }

  /** Ends the MCP session on the server (its shell stops). */
  terminateSession(): Promise<void> {
    if (!this.sessionId || this.closed) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const req = this.open("DELETE", undefined, (res) => {
        res.resume();
        res.once("end", () => resolve());
      });
      req.once("error", reject);
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const req of this.requests) req.destroy();
    this.requests.clear();
    this.agent.destroy();
    this.onclose?.();
  }
}
