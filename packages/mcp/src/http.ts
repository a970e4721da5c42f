import { randomUUID, timingSafeEqual } from "node:crypto";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createMcpExpressApp } from "@modelcontextprotocol/sdk/server/express.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import type { NextFunction, Request, Response } from "express";
import { log } from "./log.js";
import { type CrowMcpServer, createServer, type ServerOptions } from "./server.js";

/** Options of {@link startHttpServer}. */
export interface HttpServerOptions extends ServerOptions {
  /** Interface to bind; loopback by default, so nothing is exposed unless asked. */
  host?: string;
  /** TCP port; 0 picks a free one. */
  port?: number;
  /** When set, every request must carry `Authorization: Bearer <token>`. */
  token?: string;
  /** Extra Host header values accepted besides the bound host (DNS-rebinding protection). */
  allowedHosts?: string[];
  /** Close an MCP session (and its shell) after this long without a request. Default 30 minutes. */
  sessionIdleMs?: number;
}

/** A running Streamable HTTP front door. */
export interface RunningHttpServer {
  /** The MCP endpoint, e.g. `http://127.0.0.1:7419/mcp`. */
  readonly url: string;
  /** Number of live MCP sessions. */
  sessionCount(): number;
  /** Closes every session (killing their shells) and stops listening. */
  close(): Promise<void>;
}

const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1"]);

interface LiveSession {
  transport: StreamableHTTPServerTransport;
  crow: CrowMcpServer;
  lastSeen: number;
}

/**
 * Serves crow-mcp over Streamable HTTP at `/mcp`, statefully: each MCP session gets its own server instance and
 * so its own shell. Host-header validation (DNS-rebinding protection) is always on: loopback names when bound to
 * loopback, otherwise the bound host plus `allowedHosts`.
 */
export async function startHttpServer(options: HttpServerOptions = {}): Promise<RunningHttpServer> {
  const host = options.host ?? "127.0.0.1";
  const allowedHosts = LOOPBACK.has(host)
    ? undefined
    : [...(host === "0.0.0.0" || host === "::" ? [] : [host]), ...(options.allowedHosts ?? [])];
  const app = createMcpExpressApp(allowedHosts?.length ? { host, allowedHosts } : { host });
  const sessions = new Map<string, LiveSession>();

  if (options.token) app.use(bearerAuth(options.token));

  app.post("/mcp", async (req: Request, res: Response) => {
    const sessionId = req.header("mcp-session-id");
    const live = sessionId ? sessions.get(sessionId) : undefined;
    if (live) {
      live.lastSeen = Date.now();
      await live.transport.handleRequest(req, res, req.body);
      return;
    }
    if (sessionId || !isInitializeRequest(req.body)) {
      jsonRpcError(
        res,
        sessionId ? 404 : 400,
        sessionId
          ? "Unknown or expired MCP session; initialize again"
          : "Bad request: no MCP session; send initialize first",
      );
      return;
    }
    const crow = createServer(options);
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        sessions.set(id, { transport, crow, lastSeen: Date.now() });
        log.info(`MCP session ${id} opened`);
      },
    });
    transport.onclose = () => {
      const id = transport.sessionId;
      if (id && sessions.delete(id)) log.info(`MCP session ${id} closed`);
      void crow.close();
    };
    await crow.server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  });

  const existingSession = async (req: Request, res: Response) => {
    const sessionId = req.header("mcp-session-id");
    const live = sessionId ? sessions.get(sessionId) : undefined;
    if (!live) {
      jsonRpcError(res, sessionId ? 404 : 400, "Unknown or missing MCP session id");
      return;
    }
    live.lastSeen = Date.now();
    await live.transport.handleRequest(req, res);
  };
  app.get("/mcp", existingSession);
  app.delete("/mcp", existingSession);

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

  const server = await new Promise<Server>((resolve, reject) => {
    const listening = app.listen(options.port ?? 0, host, (error?: Error) =>
      error ? reject(error) : resolve(listening),
    );
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === "IPv6" ? `[${address.address}]` : address.address;

  return {
    url: `http://${shownHost}:${address.port}/mcp`,
    sessionCount: () => sessions.size,
    close: async () => {
      clearInterval(sweeper);
      const all = [...sessions.values()];
      sessions.clear();
      await Promise.all(
        all.map(async (live) => {
          await live.transport.close().catch(() => undefined);
          await live.crow.close();
        }),
      );
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function bearerAuth(token: string) {
  const expected = Buffer.from(`Bearer ${token}`);
  return (req: Request, res: Response, next: NextFunction) => {
    const given = Buffer.from(req.header("authorization") ?? "");
    if (given.length === expected.length && timingSafeEqual(given, expected)) {
      next();
      return;
    }
    res.setHeader("WWW-Authenticate", 'Bearer realm="crow-mcp"');
    jsonRpcError(res, 401, "Unauthorized: send the crow-mcp token as 'Authorization: Bearer <token>'");
  };
}

function jsonRpcError(res: Response, status: number, message: string): void {
  res.status(status).json({ jsonrpc: "2.0", error: { code: -32000, message }, id: null });
}
