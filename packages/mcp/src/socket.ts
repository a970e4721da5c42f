/**
 * Streamable HTTP on a unix socket: how one agent process shares one crow-mcp among all its sessions. The socket lives
 * in a directory only its user can enter, so no token is needed and nothing listens on the network; there is no Host
 * header to check either (a browser cannot reach a unix socket). Plain node:http: express and its body parser are
 * not loaded, the bodies are small JSON-RPC messages.
 */
import { chmodSync } from "node:fs";
import {
  createServer as createHttpServer,
  type IncomingMessage,
  request,
  type Server,
  type ServerResponse,
} from "node:http";
import type { ServerOptions } from "./server.js";
import { createSessionTable, jsonRpcError } from "./sessions.js";
import { SocketServerTransport } from "./socket-transport.js";

/** Largest request body accepted (a `write` of a big file is the largest message an agent sends). */
const MAX_BODY_BYTES = 64 * 1024 * 1024;

/** A running unix-socket front. */
export interface RunningSocketServer {
  readonly socketPath: string;
  sessionCount(): number;
  /** Closes every session (killing their shells) and stops listening. */
  close(): Promise<void>;
}

/** One request to our own socket; resolves with the response's session id header and body. */
function selfRequest(
  socketPath: string,
  method: string,
  body: unknown,
  sessionId?: string,
): Promise<{ sessionId: string | undefined; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        socketPath,
        method,
        path: "/mcp",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          ...(sessionId ? { "mcp-session-id": sessionId, "mcp-protocol-version": "2025-06-18" } : {}),
        },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          text += chunk;
        });
        res.on("end", () => {
          const id = res.headers["mcp-session-id"];
          resolve({ sessionId: Array.isArray(id) ? id[0] : id, text });
        });
      },
    );
    req.on("error", reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

async function warmUp(socketPath: string): Promise<void> {
  try {
    const init = await selfRequest(socketPath, "POST", {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "warm-up", version: "0" } },
    });
    if (!init.sessionId) return;
    await selfRequest(socketPath, "POST", { jsonrpc: "2.0", method: "notifications/initialized" }, init.sessionId);
    await selfRequest(socketPath, "POST", { jsonrpc: "2.0", id: 2, method: "tools/list" }, init.sessionId);
    await selfRequest(socketPath, "DELETE", undefined, init.sessionId);
  } catch {
    // Only a head start: the real sessions work the same without it.
  }
}

async function readJson(req: IncomingMessage): Promise<{ body: unknown } | { error: string }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return { error: `request body larger than ${MAX_BODY_BYTES} bytes` };
    chunks.push(chunk);
  }
  try {
    return { body: JSON.parse(Buffer.concat(chunks).toString("utf8")) };
  } catch (error) {
    return { error: `request body is not JSON: ${(error as Error).message}` };
  }
}

/** Serves crow-mcp's MCP sessions at `/mcp` on the unix socket `socketPath` (which must not exist yet). */
export async function startSocketServer(
  socketPath: string,
  options: ServerOptions & {
    sessionIdleMs?: number;
    /**
     * Right after listening, open, list the tools of and end one MCP session: the first real session, which usually
     * comes while the agent is still loading, then finds that code compiled (its initialize: ~55 → ~15 ms).
     */
    warmUp?: boolean;
  } = {},
): Promise<RunningSocketServer> {
  const sessions = createSessionTable(
    options,
    (newSessionId, initialized) => new SocketServerTransport(newSessionId, initialized),
  );
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = req.url ?? "/";
    if (url !== "/mcp" && !url.startsWith("/mcp?")) {
      jsonRpcError(res, 404, `Not found: ${url} (the MCP endpoint is /mcp)`);
      return;
    }
    if (req.method === "POST") {
      const parsed = await readJson(req);
      if ("error" in parsed) jsonRpcError(res, 400, `Bad request: ${parsed.error}`);
      else await sessions.post(req, res, parsed.body);
    } else if (req.method === "GET" || req.method === "DELETE") {
      await sessions.existing(req, res);
    } else {
      jsonRpcError(res, 405, `Method ${req.method} not allowed`);
    }
  };
  const server: Server = createHttpServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) jsonRpcError(res, 500, `Internal error: ${(error as Error).message}`);
      else res.end();
    });
  });
  // Streams of long commands stay open as long as the command runs (progress resets the client's timeout).
  server.requestTimeout = 0;
  server.headersTimeout = 0;
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(socketPath, () => {
      server.off("error", reject);
      resolve();
    });
  });
  // Only the owner may connect (the directory is private too; this covers a socket placed elsewhere).
  chmodSync(socketPath, 0o600);
  // After listening (the client may connect meanwhile; its requests then wait at most for the rest of the warm-up).
  if (options.warmUp) setImmediate(() => void warmUp(socketPath));
  return {
    socketPath,
    sessionCount: () => sessions.count(),
    close: async () => {
      await sessions.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
