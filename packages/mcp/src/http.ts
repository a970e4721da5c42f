import { timingSafeEqual } from "node:crypto";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createMcpExpressApp } from "@modelcontextprotocol/sdk/server/express.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { NextFunction, Request, Response } from "express";
import { jsonRpcError } from "./json-rpc-error.js";
import type { ServerOptions } from "./server.js";
import { createSessionTable } from "./sessions.js";

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

/**
 * Serves crow-mcp over Streamable HTTP at `/mcp`, statefully: each MCP session gets its own server instance and
 * so its own shell (and its own working directory when `initialize` carries the `crow-cwd` header; see sessions.ts). Host-header validation (DNS-rebinding protection) is always on: loopback names when bound to
 * loopback, otherwise the bound host plus `allowedHosts`.
 */
export async function startHttpServer(options: HttpServerOptions = {}): Promise<RunningHttpServer> {
  const host = options.host ?? "127.0.0.1";
  const allowedHosts = LOOPBACK.has(host)
    ? undefined
    : [...(host === "0.0.0.0" || host === "::" ? [] : [host]), ...(options.allowedHosts ?? [])];
  const app = createMcpExpressApp(allowedHosts?.length ? { host, allowedHosts } : { host });
  // Any MCP client may connect here: the SDK's full transport (standalone GET stream, its checks).
  const sessions = createSessionTable(
    options,
    (sessionIdGenerator, onsessioninitialized) =>
      new StreamableHTTPServerTransport({ sessionIdGenerator, onsessioninitialized }),
  );

  if (options.token) app.use(bearerAuth(options.token));

  app.post("/mcp", (req: Request, res: Response) => sessions.post(req, res, req.body));
  app.get("/mcp", (req: Request, res: Response) => sessions.existing(req, res));
  app.delete("/mcp", (req: Request, res: Response) => sessions.existing(req, res));

  const server = await new Promise<Server>((resolve, reject) => {
    const listening = app.listen(options.port ?? 0, host, (error?: Error) =>
      error ? reject(error) : resolve(listening),
    );
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === "IPv6" ? `[${address.address}]` : address.address;

  return {
    url: `http://${shownHost}:${address.port}/mcp`,
    sessionCount: () => sessions.count(),
    close: async () => {
      await sessions.close();
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
