/**
 * Streamable HTTP on a unix socket: how one agent process shares one crow-mcp among all its sessions. The socket lives
 * in a directory only its user can enter, so no token is needed and nothing listens on the network; there is no Host
 * header to check either (a browser cannot reach a unix socket). Plain node:http: express and its body parser are
 * not loaded, the bodies are small JSON-RPC messages. This module itself needs nothing but node:http, so crow-mcp
 * says it listens before the MCP SDK, zod and the tools are compiled (socket-sessions.ts, loaded right after): the
 * agent that waits for that line goes on ~100 ms sooner, and its first requests wait only for what is left to load.
 */
import { chmodSync } from "node:fs";
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { jsonRpcError } from "./json-rpc-error.js";
import { log } from "./log.js";
import type { ServerOptions } from "./server.js";
import type { SessionTable } from "./sessions.js";
import { warmUp } from "./warm-up.js";

/** Largest request body accepted (a `write` of a big file is the largest message an agent sends). */
const MAX_BODY_BYTES = 64 * 1024 * 1024;

/** A running unix-socket front. */
export interface RunningSocketServer {
  readonly socketPath: string;
  sessionCount(): number;
  /** Closes every session (killing their shells) and stops listening. */
  close(): Promise<void>;
}

/** Reads a POST body as JSON (plain events: an async iterator costs a fresh process ~4 ms on its first request). */
function readJson(req: IncomingMessage): Promise<{ body: unknown } | { error: string }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const collect = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) {
        chunks.push(chunk);
        return;
      }
      // Drain and drop the rest so the error answer can still be sent on this connection.
      chunks.length = 0;
      req.off("data", collect);
      req.resume();
      resolve({ error: `request body larger than ${MAX_BODY_BYTES} bytes` });
    };
    req.on("data", collect);
    req.on("error", (error) => resolve({ error: error.message }));
    req.on("end", () => {
      try {
        resolve({ body: JSON.parse(Buffer.concat(chunks).toString("utf8")) });
      } catch (error) {
        resolve({ error: `request body is not JSON: ${(error as Error).message}` });
      }
    });
  });
}

/** Serves crow-mcp's MCP sessions at `/mcp` on the unix socket `socketPath` (which must not exist yet). */
export async function startSocketServer(
  socketPath: string,
  options: ServerOptions & {
    sessionIdleMs?: number;
    /**
     * Once listening and loaded, and if no client has asked anything yet, open a session on the socket, list the
     * tools, make one tool call and end it (warm-up.ts): a first session that comes later finds that code compiled.
     */
    warmUp?: boolean;
  } = {},
): Promise<RunningSocketServer> {
  // The SDK and the tools load only once the socket listens (see below); a request that comes earlier waits for them.
  let table: Promise<SessionTable> | undefined;
  const sessions = (): Promise<SessionTable> =>
    (table ??= import("./socket-sessions.js").then(
      (loaded) => loaded.createSocketSessions(options),
      (error: unknown) => {
        throw new Error(
          `crow-mcp could not load its tools (${(error as Error).message}); its installation is incomplete: reinstall crow`,
        );
      },
    ));
  let asked = false;
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    asked = true;
    const url = req.url ?? "/";
    if (url !== "/mcp" && !url.startsWith("/mcp?")) {
      jsonRpcError(res, 404, `Not found: ${url} (the MCP endpoint is /mcp)`);
      return;
    }
    if (req.method === "POST") {
      const parsed = await readJson(req);
      if ("error" in parsed) jsonRpcError(res, 400, `Bad request: ${parsed.error}`);
      else await (await sessions()).post(req, res, parsed.body);
    } else if (req.method === "GET" || req.method === "DELETE") {
      await (await sessions()).existing(req, res);
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
  // Load the rest once the caller has said it listens (an immediate runs after the caller's continuation): the client
  // connects while this loads, and its first requests wait only for what is left of it. Then, if still idle, warm up.
  let count = () => 0;
  setImmediate(() => {
    sessions().then(
      async (loaded) => {
        count = () => loaded.count();
        // A client that is already asking warms the same code itself; a warm-up would only compete with it.
        if (options.warmUp && !asked) await warmUp(socketPath);
      },
      (error: unknown) => log.error((error as Error).message),
    );
  });
  return {
    socketPath,
    sessionCount: () => count(),
    close: async () => {
      await sessions().then(
        (loaded) => loaded.close(),
        () => undefined,
      );
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
