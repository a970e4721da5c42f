/**
 * The MCP sessions of a Streamable HTTP crow-mcp (`crow-mcp --http`): each session has its own server instance and so
 * its own shell, working directory and web cache. Independent of the HTTP front: handlers take Node's plain request
 * and response plus the parsed JSON body. (The unix socket's sessions are its connections: socket-sessions.ts.)
 */
import { randomUUID } from "node:crypto";
import { statSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import path from "node:path";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { errorText } from "./error-text.js";
import { jsonRpcError } from "./json-rpc-error.js";
import { log } from "./log.js";
import { type CrowMcpServer, createServer, type ServerOptions } from "./server.js";

/**
 * Request header that gives a new MCP session its working directory (URI-encoded absolute path, read on
 * `initialize` only). Without it a session works in the server's directory.
 */
export const CWD_HEADER = "crow-cwd";

/** The transport of one MCP session over HTTP (the SDK's StreamableHTTPServerTransport). */
export interface SessionTransport extends Transport {
  /** Handles one HTTP request of this session (`body`: the parsed JSON of a POST). */
  handleRequest(req: IncomingMessage, res: ServerResponse, body?: unknown): Promise<void>;
}

/**
 * Makes the transport of a new session: it must call `initialized(id)` with the session id it assigns when it
 * handles the `initialize` request.
 */
export type SessionTransportFactory = (
  newSessionId: () => string,
  initialized: (id: string) => void,
) => SessionTransport;

interface LiveSession {
  transport: SessionTransport;
  crow: CrowMcpServer;
  lastSeen: number;
}

/** The sessions of one HTTP front. */
export interface SessionTable {
  /** POST /mcp: an `initialize` opens a session, anything else goes to the session its id names. */
  post(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void>;
  /** GET (notification stream) and DELETE (end the session) /mcp. */
  existing(req: IncomingMessage, res: ServerResponse): Promise<void>;
  /** Number of live MCP sessions. */
  count(): number;
  /** Closes every session (killing their shells). */
  close(): Promise<void>;
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** The working directory a new session asked for, or an error message saying what is wrong with it. */
function sessionCwd(req: IncomingMessage, fallback: string): { cwd: string } | { error: string } {
  const raw = header(req, CWD_HEADER);
  if (raw === undefined || raw === "") return { cwd: fallback };
  let cwd: string;
  try {
    cwd = decodeURIComponent(raw);
  } catch {
    return { error: `${CWD_HEADER} must be a URI-encoded absolute path, got ${JSON.stringify(raw)}` };
  }
  return checkSessionCwd(cwd, CWD_HEADER);
}

/**
 * Checks a working directory a new session asked for (`what` names where it came from, for the error): an absolute
 * path of an existing directory.
 */
export function checkSessionCwd(cwd: string, what: string): { cwd: string } | { error: string } {
  if (!path.isAbsolute(cwd)) return { error: `${what} must be an absolute path, got ${JSON.stringify(cwd)}` };
  try {
    if (!statSync(cwd).isDirectory()) return { error: `${what} ${cwd} is not a directory` };
  } catch (error) {
    return { error: `${what} ${cwd} cannot be used: ${errorText(error)}` };
  }
  return { cwd };
}

/**
 * A session table for `options` (one server instance per session; `sessionIdleMs` closes forgotten sessions), each
 * session on a transport made by `makeTransport`.
 */
export function createSessionTable(
  options: ServerOptions & { sessionIdleMs?: number },
  makeTransport: SessionTransportFactory,
): SessionTable {
  const sessions = new Map<string, LiveSession>();
  const fallbackCwd = options.cwd ?? process.cwd();

  const idleMs = options.sessionIdleMs ?? 30 * 60_000;
  const sweeper = setInterval(
    () => {
      const now = Date.now();
      for (const [id, live] of sessions) {
        if (now - live.lastSeen > idleMs) {
          log.info(`MCP session ${id} idle for ${Math.round(idleMs / 1000)} s; closing it`);
          sessions.delete(id);
          void live.transport.close();
        }
      }
    },
    Math.min(idleMs, 60_000),
  );
  sweeper.unref();

  return {
    async post(req, res, body) {
      const sessionId = header(req, "mcp-session-id");
      const live = sessionId ? sessions.get(sessionId) : undefined;
      if (live) {
        live.lastSeen = Date.now();
        await live.transport.handleRequest(req, res, body);
        return;
      }
      if (sessionId || !isInitializeRequest(body)) {
        jsonRpcError(
          res,
          sessionId ? 404 : 400,
          sessionId
            ? "Unknown or expired MCP session; initialize again"
            : "Bad request: no MCP session; send initialize first",
        );
        return;
      }
      const where = sessionCwd(req, fallbackCwd);
      if ("error" in where) {
        jsonRpcError(res, 400, `Bad request: ${where.error}`);
        return;
      }
      const crow = createServer({ ...options, cwd: where.cwd });
      const transport: SessionTransport = makeTransport(
        () => randomUUID(),
        (id) => {
          sessions.set(id, { transport, crow, lastSeen: Date.now() });
          log.info(`MCP session ${id} opened in ${where.cwd}`);
        },
      );
      transport.onclose = () => {
        const id = transport.sessionId;
        if (id && sessions.delete(id)) log.info(`MCP session ${id} closed`);
        void crow.close();
      };
      await crow.server.connect(transport);
      await transport.handleRequest(req, res, body);
    },
    async existing(req, res) {
      const sessionId = header(req, "mcp-session-id");
      const live = sessionId ? sessions.get(sessionId) : undefined;
      if (!live) {
        jsonRpcError(res, sessionId ? 404 : 400, "Unknown or missing MCP session id");
        return;
      }
      live.lastSeen = Date.now();
      await live.transport.handleRequest(req, res);
    },
    count: () => sessions.size,
    async close() {
      clearInterval(sweeper);
      const all = [...sessions.values()];
      sessions.clear();
      await Promise.all(
        all.map(async (live) => {
          await live.transport.close().catch(() => undefined);
          await live.crow.close();
        }),
      );
    },
  };
}
