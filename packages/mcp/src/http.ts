import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createMcpExpressApp } from "@modelcontextprotocol/sdk/server/express.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { NextFunction, Request, Response } from "express";
import { acceptedHostNames, createFrontDoor } from "./http-front.js";
import { jsonRpcError } from "./json-rpc-error.js";
import type { ServerOptions } from "./server.js";
import { createSessionTable } from "./sessions.js";

/** Options of {@link startHttpServer}. */
export interface HttpServerOptions extends ServerOptions {
  /** Interface to bind; loopback by default, so nothing is exposed unless asked. */
  host?: string;
  /** TCP port; 0 picks a free one. */
  port?: number;
  /**
   * When set, every request must carry `Authorization: Bearer <token>` (checked before its body is read). Left out
   * only by an explicit opt-out: the command line generates one unless `--no-auth` is given.
   */
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

/**
 * Serves crow-mcp over Streamable HTTP at `/mcp`, statefully: each MCP session gets its own server instance and
 * so its own shell (and its own working directory when `initialize` carries the `crow-cwd` header; see sessions.ts).
 * Every request passes the front door first (http-front.ts): Host-header validation (DNS-rebinding protection,
 * always on), then the token; only then is its body parsed. Errors are JSON-RPC errors, never Express's HTML pages.
 */
export async function startHttpServer(options: HttpServerOptions = {}): Promise<RunningHttpServer> {
  const host = options.host ?? "127.0.0.1";
  const acceptedHosts = acceptedHostNames(host, options.allowedHosts);
  const frontDoor = createFrontDoor(acceptedHosts, options.token);
  // The SDK's own Host check stays on behind the front door (same names): two locks, one list.
  const app = createMcpExpressApp({ host, allowedHosts: acceptedHosts });
  // Any MCP client may connect here: the SDK's full transport (standalone GET stream, its checks).
  const sessions = createSessionTable(
    options,
    (sessionIdGenerator, onsessioninitialized) =>
      new StreamableHTTPServerTransport({ sessionIdGenerator, onsessioninitialized }),
  );

  app.post("/mcp", (req: Request, res: Response) => sessions.post(req, res, req.body));
  app.get("/mcp", (req: Request, res: Response) => sessions.existing(req, res));
  app.delete("/mcp", (req: Request, res: Response) => sessions.existing(req, res));
  // Anything else: a JSON-RPC error too, not Express's HTML "Cannot GET".
  app.use((req: Request, res: Response) =>
    jsonRpcError(res, 404, `Not found: ${req.method} ${req.path}; crow-mcp serves MCP at /mcp`),
  );
  app.use(jsonErrors);

  const server = createServer((req, res) => {
    if (frontDoor(req, res)) app(req, res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => {
      server.off("error", reject);
      resolve();
    });
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

/**
 * Express's last error handler: a body that is not JSON (or too large) gets a JSON-RPC error, not Express's HTML
 * page with a stack trace and the install path in it.
 */
function jsonErrors(error: unknown, _req: Request, res: Response, next: NextFunction): void {
  if (res.headersSent) {
    next(error);
    return;
  }
  const { status, type } = error as { status?: unknown; type?: unknown };
  const code = typeof status === "number" && status >= 400 && status < 600 ? status : 500;
  if (type === "entity.parse.failed") {
    jsonRpcError(res, 400, "Parse error: the request body is not valid JSON", -32700);
    return;
  }
  if (type === "entity.too.large") {
    jsonRpcError(res, 413, "The request body is too large");
    return;
  }
  jsonRpcError(res, code, code < 500 ? "Bad request" : "Internal error while handling the request");
}
