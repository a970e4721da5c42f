/**
 * The part of the unix-socket front that needs the MCP SDK and the tools: its session table (each session on the
 * socket's own transport). socket.ts loads it once it listens, so the listening line comes first.
 */
import type { ServerOptions } from "./server.js";
import { createSessionTable, type SessionTable } from "./sessions.js";
import { SocketServerTransport } from "./socket-transport.js";

/** The session table of a socket front serving `options`. */
export function createSocketSessions(options: ServerOptions & { sessionIdleMs?: number }): SessionTable {
  return createSessionTable(
    options,
    (newSessionId, initialized) => new SocketServerTransport(newSessionId, initialized),
  );
}
