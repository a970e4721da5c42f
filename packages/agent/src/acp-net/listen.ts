/**
 * `crow acp --listen HOST:PORT`: ACP over the network, per the Streamable HTTP & WebSocket transport RFD, served by
 * the ACP SDK's experimental server (one `/acp` endpoint: POST plus SSE GET streams, or a WebSocket upgrade). Each
 * transport connection gets its own agent, as each `crow acp` process has one on stdio: its sessions, the client's
 * capabilities, its permission questions and fs/terminal requests go back over that connection. The agents share the
 * process's runtime (one store, one toolserver). In front of it all, the front door (front-door.ts).
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import type { Stream } from "@agentclientprotocol/sdk";
import type { Crow } from "@crow/core";
import { isLoopback } from "../base/hosts.js";
import { log } from "../base/log.js";
import { VERSION } from "../base/version.js";
import type { AgentConfig } from "../config/index.js";
import { frontDoor, type Refusal } from "./front-door.js";
import { LiveSessions } from "./live-sessions.js";

/** Where to listen, parsed from `HOST:PORT`, `[IPv6]:PORT` or `PORT` (host 127.0.0.1). */
export interface ListenAddress {
  host: string;
  port: number;
}

/** Parses the `--listen` value; throws an Error whose message says what is expected. */
export function parseListenAddress(text: string): ListenAddress {
  const match = /^(?:\[([^\]]+)\]|([^:[\]]*)):(\d+)$/.exec(text) ?? /^()()(\d+)$/.exec(text);
  const port = Number(match?.[3]);
  if (!match || !Number.isInteger(port) || port > 65535) {
    throw new Error(`--listen expects HOST:PORT or PORT (e.g. 127.0.0.1:7420, [::1]:7420, 7420), got "${text}"`);
  }
  return { host: match[1] || match[2] || "127.0.0.1", port };
}

export interface ListenOptions extends ListenAddress {
  token: string;
  /** Host names also accepted in Host and Origin headers (`--allowed-host`). */
  allowHosts: readonly string[];
}

/** A running server. */
export interface Listening {
  /** `http://host:port/acp`, the address clients use (ws:// for WebSocket). */
  url: string;
  /** Stops taking connections, closes every connection's sessions, then the runtime. */
  close(): Promise<void>;
}

function refuse(res: ServerResponse, refusal: Refusal): void {
  res.writeHead(refusal.status, {
    "Content-Type": "text/plain; charset=utf-8",
    ...(refusal.status === 401 ? { "WWW-Authenticate": 'Bearer realm="crow acp"' } : {}),
  });
  res.end(`${refusal.reason}\n`);
}

function refuseUpgrade(socket: Duplex, refusal: Refusal): void {
  const body = `${refusal.reason}\n`;
  const status =
    refusal.status === 401 ? "401 Unauthorized" : refusal.status === 404 ? "404 Not Found" : "403 Forbidden";
  socket.end(
    `HTTP/1.1 ${status}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

const NOT_HERE: Refusal = { status: 404, reason: "crow acp serves ACP at /acp only" };

function pathOf(req: IncomingMessage): string {
  try {
    return new URL(req.url ?? "/", "http://x").pathname;
  } catch {
    return "";
  }
}

/** Starts the server; resolves once it listens. */
export async function startListening(config: AgentConfig, options: ListenOptions): Promise<Listening> {
  const [{ AcpServer }, { createNodeHttpHandler, createNodeWebSocketUpgradeHandler }, { WebSocketServer }] =
    await Promise.all([
      import("@agentclientprotocol/sdk/experimental/server"),
      import("@agentclientprotocol/sdk/experimental/node"),
      import("ws"),
    ]);
  const { createAgent } = await import("../acp/agent.js");
  const { ACP_MAX_LINE_BYTES } = await import("../acp/bounded-input.js");

  // One runtime for every connection, started on first use; a failed start is retried by the next request.
  let starting: Promise<Crow> | undefined;
  const runtime = (): Promise<Crow> => {
    starting ??= import("../sdk/create-crow.js").then(({ createCrow }) => createCrow({ config }));
    starting.catch(() => {
      starting = undefined;
    });
    return starting;
  };
  const live = new LiveSessions();
  const agents = new Set<() => Promise<void>>();
  const acp = new AcpServer({
    createAgent: () => ({
      connect(stream: Stream) {
        const filtered = live.filter(stream);
        const hosted = createAgent({ config, runtime });
        const connection = hosted.app.connect(filtered.stream);
        agents.add(hosted.close);
        // The client went away: its sessions close (they are stored) and are anyone's to open again.
        void connection.closed
          .catch((error: unknown) => log.debug("an ACP connection closed with an error", error))
          .then(() => hosted.close())
          .finally(() => {
            agents.delete(hosted.close);
            filtered.release();
          });
        return connection;
      },
    }),
  });
  const check = frontDoor(options.host, options.token, options.allowHosts);
  const handle = createNodeHttpHandler(acp);
  const webSockets = new WebSocketServer({ noServer: true, maxPayload: ACP_MAX_LINE_BYTES });
  const upgrade = createNodeWebSocketUpgradeHandler(acp, webSockets);
  const server = createServer((req, res) => {
    const refusal = pathOf(req) === "/acp" ? check(req) : NOT_HERE;
    if (refusal) refuse(res, refusal);
    else handle(req, res);
  });
  server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const refusal = pathOf(req) === "/acp" ? check(req) : NOT_HERE;
    if (refusal) refuseUpgrade(socket, refusal);
    else upgrade(req, socket, head);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const shown = options.host.includes(":") ? `[${options.host}]` : options.host;
  return {
    url: `http://${shown}:${port}/acp`,
    async close() {
      server.close();
      server.closeAllConnections();
      webSockets.close();
      await acp.close();
      await Promise.allSettled([...agents].map((close) => close()));
      const crow = starting;
      starting = undefined;
      await crow?.then((c) => c.close()).catch(() => {});
    },
  };
}

/**
 * Runs `crow acp --listen` until SIGINT or SIGTERM. Says on stderr where it listens (and the token when it made
 * one up); off loopback, that TLS is a reverse proxy's job.
 */
export async function runListen(config: AgentConfig, options: ListenOptions & { generated: boolean }): Promise<void> {
  const listening = await startListening(config, options);
  const ws = listening.url.replace(/^http:/, "ws:");
  process.stderr.write(`crow acp ${VERSION} listening on ${listening.url} (WebSocket: ${ws})\n`);
  if (options.generated) {
    process.stderr.write(
      `crow acp: token (send it as 'Authorization: Bearer <token>'; set CROW_ACP_TOKEN or --token-file to choose one): ${options.token}\n`,
    );
  }
  if (!isLoopback(options.host)) {
    process.stderr.write(
      "crow acp: this address is reachable from other machines and crow speaks plain HTTP: put a reverse proxy with TLS in front of it (the token would otherwise cross the network in clear). See docs/remote-acp.md.\n",
    );
  }
  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      resolve();
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
  await listening.close();
}
