/**
 * The server side of one MCP session on the unix socket: Streamable HTTP on node:http's request and response
 * directly. The SDK's StreamableHTTPServerTransport turns every request into a fetch Request (through
 * @hono/node-server) and every answer into a web stream, which cost crow-mcp ~1.3 ms of CPU per tool call more than
 * stdio did. This one keeps what the agent's client (the agent's tools/socket-transport.ts) uses:
 * - POST of one message or a batch: notifications and responses are accepted with 202; requests are answered on the
 *   same HTTP response, as JSON when the answer is all there is, or as server-sent events when a notification for one
 *   of the requests (a terminal command's progress) comes before it — the stream then ends with the answer;
 * - the session id (`mcp-session-id`) assigned by `initialize` and required afterwards, with the protocol version
 *   header checked like the SDK does;
 * - DELETE ends the session.
 * Not offered: the standalone GET stream (crow-mcp sends nothing outside a request; the spec lets a server answer
 * 405) and resumable streams. The TCP front (`crow-mcp --http`, for any MCP client) keeps the SDK's transport.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  type JSONRPCMessage,
  type MessageExtraInfo,
  type RequestId,
  SUPPORTED_PROTOCOL_VERSIONS,
} from "@modelcontextprotocol/sdk/types.js";

/** Answers of one POST still owed: the ids it asked, the answers so far, and whether it became an event stream. */
interface PendingPost {
  res: ServerResponse;
  waiting: Set<RequestId>;
  answers: JSONRPCMessage[];
  streaming: boolean;
}

function isRequest(message: JSONRPCMessage): message is JSONRPCMessage & { id: RequestId; method: string } {
  return "method" in message && "id" in message;
}

function isResponse(message: JSONRPCMessage): message is JSONRPCMessage & { id: RequestId } {
  return ("result" in message || "error" in message) && "id" in message;
}

function isMessage(value: unknown): value is JSONRPCMessage {
  return typeof value === "object" && value !== null && (value as { jsonrpc?: unknown }).jsonrpc === "2.0";
}

function jsonError(res: ServerResponse, status: number, code: number, message: string): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }));
}

export class SocketServerTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;
  sessionId?: string;
  /** Which POST each request in flight came on. */
  private readonly byRequest = new Map<RequestId, PendingPost>();
  private closed = false;

  constructor(
    private readonly newSessionId: () => string,
    /** Called once `initialize` assigned the session id (the session table registers the session). */
    private readonly onSessionInitialized: (id: string) => void,
  ) {}

  async start(): Promise<void> {}

  /** One HTTP request of this session; `body` is the parsed JSON of a POST. */
  async handleRequest(req: IncomingMessage, res: ServerResponse, body?: unknown): Promise<void> {
    if (req.method === "DELETE") {
      res.writeHead(200).end();
      await this.close();
      return;
    }
    if (req.method !== "POST") {
      res.writeHead(405, { allow: "POST, DELETE", "content-type": "application/json" });
      res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message: "Method not allowed" }, id: null }));
      return;
    }
    if (this.closed) return jsonError(res, 404, -32001, "Session not found");
    const messages = Array.isArray(body) ? (body as unknown[]) : [body];
    if (messages.length === 0 || !messages.every(isMessage)) {
      return jsonError(res, 400, -32700, "Parse error: Invalid JSON-RPC message");
    }
    const initialize = messages.find((m) => isRequest(m) && m.method === "initialize");
    if (initialize) {
      if (this.sessionId !== undefined)
        return jsonError(res, 400, -32600, "Invalid Request: Server already initialized");
      if (messages.length > 1) {
        return jsonError(res, 400, -32600, "Invalid Request: Only one initialization request is allowed");
      }
      this.sessionId = this.newSessionId();
      this.onSessionInitialized(this.sessionId);
    } else {
      const version = req.headers["mcp-protocol-version"];
      if (typeof version === "string" && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
        return jsonError(
          res,
          400,
          -32000,
          `Bad Request: Unsupported protocol version: ${version} (supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(", ")})`,
        );
      }
    }
    const requests = messages.filter(isRequest);
    const extra: MessageExtraInfo = { requestInfo: { headers: req.headers } };
    if (requests.length === 0) {
      res.writeHead(202).end();
      for (const message of messages) this.onmessage?.(message, extra);
      return;
    }
    const pending: PendingPost = { res, waiting: new Set(requests.map((r) => r.id)), answers: [], streaming: false };
    for (const id of pending.waiting) this.byRequest.set(id, pending);
    // The client went away before every answer: what is still owed has nowhere to go.
    res.once("close", () => {
      for (const id of pending.waiting) if (this.byRequest.get(id) === pending) this.byRequest.delete(id);
    });
    for (const message of messages) this.onmessage?.(message, extra);
  }

  async send(message: JSONRPCMessage, options?: { relatedRequestId?: RequestId }): Promise<void> {
    const id = isResponse(message) ? message.id : options?.relatedRequestId;
    // Outside any request (crow-mcp's tools never do that): there is no stream to carry it.
    const pending = id === undefined ? undefined : this.byRequest.get(id);
    if (!pending || pending.res.writableEnded) return;
    const { res } = pending;
    if (!isResponse(message)) {
      // A notification before the answer: the response becomes an event stream.
      if (!pending.streaming) {
        pending.streaming = true;
        res.writeHead(200, {
          "content-type": "text/event-stream",
          "cache-control": "no-cache, no-transform",
          ...(this.sessionId ? { "mcp-session-id": this.sessionId } : {}),
        });
        for (const answer of pending.answers) res.write(`event: message\ndata: ${JSON.stringify(answer)}\n\n`);
        pending.answers = [];
      }
      res.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
      return;
    }
    if (id !== undefined) {
      pending.waiting.delete(id);
      this.byRequest.delete(id);
    }
    const done = pending.waiting.size === 0;
    if (pending.streaming) {
      res.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
      if (done) res.end();
      return;
    }
    pending.answers.push(message);
    if (!done) return;
    const single = pending.answers.length === 1 ? pending.answers[0] : undefined;
    const text = JSON.stringify(single ?? pending.answers);
    res.writeHead(200, {
      "content-type": "application/json",
      "content-length": Buffer.byteLength(text),
      ...(this.sessionId ? { "mcp-session-id": this.sessionId } : {}),
    });
    res.end(text);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const pending of new Set(this.byRequest.values())) {
      if (!pending.res.writableEnded) pending.res.end();
    }
    this.byRequest.clear();
    this.onclose?.();
  }
}
