/**
 * The part of the unix-socket front that needs the MCP SDK and the tools: its sessions. One connection is one MCP
 * session (line-transport.ts): its first message must be `initialize`, whose `_meta["crow/cwd"]` names the session's
 * working directory (default: the server's); the session gets its own server instance, so its own shell, web cache
 * and edit locks, and ends when the connection does. socket.ts loads this module once it listens, so the listening
 * line comes first.
 */
import { timingSafeEqual } from "node:crypto";
import type { Socket } from "node:net";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { errorText } from "./error-text.js";
import { CWD_META_KEY, SECRET_META_KEY, SocketLineTransport } from "./line-transport.js";
import { log } from "./log.js";
import { LSP_META_KEY, parseLspSettings } from "./lsp/languages.js";
import { parseSandboxPolicy, SANDBOX_META_KEY, type SandboxPolicy } from "./sandbox/policy.js";
import { type CrowMcpServer, createServer, type ServerOptions } from "./server.js";
import { checkSessionCwd } from "./sessions.js";

/** The sessions of one socket front. */
export interface SocketSessions {
  /** Serves one new connection as one MCP session. */
  accept(socket: Socket): void;
  /** Number of live MCP sessions. */
  count(): number;
  /** Ends every session (killing their shells) and closes their connections. */
  close(): Promise<void>;
}

/** The working directory an `initialize` asks for, or what is wrong with it. */
function requestedCwd(message: JSONRPCMessage, fallback: string): { cwd: string } | { error: string } {
  const meta = (message as { params?: { _meta?: Record<string, unknown> } }).params?._meta;
  const cwd = meta?.[CWD_META_KEY];
  if (cwd === undefined || cwd === "") return { cwd: fallback };
  if (typeof cwd !== "string")
    return { error: `_meta["${CWD_META_KEY}"] must be a string, got ${JSON.stringify(cwd)}` };
  return checkSessionCwd(cwd, `_meta["${CWD_META_KEY}"]`);
}

/** The sandbox policy an `initialize` asks for (none: the server's default), or what is wrong with it. */
function requestedPolicy(message: JSONRPCMessage): { policy?: SandboxPolicy } | { error: string } {
  const meta = (message as { params?: { _meta?: Record<string, unknown> } }).params?._meta;
  const raw = meta?.[SANDBOX_META_KEY];
  if (raw === undefined) return {};
  const parsed = parseSandboxPolicy(raw);
  return "error" in parsed ? { error: `_meta["${SANDBOX_META_KEY}"]: ${parsed.error}` } : parsed;
}

/** Whether an `initialize` carries `secret` in `_meta["crow/secret"]` (compared in constant time). */
function carriesSecret(message: JSONRPCMessage, secret: string): boolean {
  const meta = (message as { params?: { _meta?: Record<string, unknown> } }).params?._meta;
  const given = meta?.[SECRET_META_KEY];
  if (typeof given !== "string") return false;
  const a = Buffer.from(given);
  const b = Buffer.from(secret);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * The sessions of a socket front serving `options` (with `secret`: only connections that carry it open a session).
 * A session with nothing in flight and no message for `sessionIdleMs` (default 30 minutes) is ended, as the HTTP
 * front does: an agent keeps a connection per session it has not closed, and most editors never close one. The agent
 * reconnects on its next call (in a new shell).
 */
export function createSocketSessions(
  options: ServerOptions & { sessionIdleMs?: number; secret?: string },
): SocketSessions {
  const { secret, ...serverOptions } = options;
  const fallbackCwd = options.cwd ?? process.cwd();
  const live = new Map<SocketLineTransport, CrowMcpServer | undefined>();
  const idleMs = options.sessionIdleMs ?? 30 * 60_000;
  const sweeper = setInterval(
    () => {
      const now = Date.now();
      for (const [transport, crow] of live) {
        if (crow && transport.unanswered === 0 && now - transport.lastActivity > idleMs) {
          log.info(`MCP session idle for ${Math.round(idleMs / 1000)} s; closing it`);
          void transport.close();
        }
      }
    },
    Math.min(idleMs, 60_000),
  );
  sweeper.unref();

  const open = (transport: SocketLineTransport, first: JSONRPCMessage) => {
    // Everything after the first message waits until the session's server is connected.
    transport.hold();
    transport.onmessage = undefined;
    if (!("method" in first) || first.method !== "initialize" || !("id" in first)) {
      return transport.refuse(first, -32600, "No MCP session on this connection yet: send initialize first");
    }
    if (secret !== undefined && !carriesSecret(first, secret)) {
      log.warn("refused a connection to the socket that did not carry the agent's secret");
      return transport.refuse(
        first,
        -32600,
        `This crow-mcp serves only the agent that started it: initialize must carry its secret in _meta["${SECRET_META_KEY}"]`,
      );
    }
    const where = requestedCwd(first, fallbackCwd);
    if ("error" in where) return transport.refuse(first, -32602, `Invalid params: ${where.error}`);
    const policy = requestedPolicy(first);
    if ("error" in policy) return transport.refuse(first, -32602, `Invalid params: ${policy.error}`);
    const lsp = parseLspSettings(
      (first as { params?: { _meta?: Record<string, unknown> } }).params?._meta?.[LSP_META_KEY],
    );
    const crow = createServer({
      ...serverOptions,
      cwd: where.cwd,
      ...(policy.policy ? { sandbox: policy.policy } : {}),
      ...(lsp ? { lsp } : {}),
    });
    live.set(transport, crow);
    log.info(`MCP session opened in ${where.cwd} (${live.size} live)`);
    crow.server.connect(transport).then(
      () => transport.release(first),
      (error: unknown) => {
        log.error(`an MCP session could not start: ${errorText(error)}`);
        void transport.close();
      },
    );
  };

  return {
    accept(socket) {
      const transport = new SocketLineTransport(socket);
      live.set(transport, undefined);
      transport.onmessage = (first) => open(transport, first);
      transport.onerror = (error) => log.warn(`MCP socket connection: ${error.message}`);
      transport.onclose = () => {
        const crow = live.get(transport);
        live.delete(transport);
        if (crow) {
          log.info(`MCP session closed (${live.size} live)`);
          void crow.close();
        }
      };
    },
    count: () => [...live.values()].filter((crow) => crow !== undefined).length,
    async close() {
      clearInterval(sweeper);
      const all = [...live.entries()];
      live.clear();
      await Promise.all(
        all.map(async ([transport, crow]) => {
          await transport.close().catch(() => undefined);
          await crow?.close();
        }),
      );
    },
  };
}
