/**
 * MCP on a unix socket, one JSON-RPC message per line and one session per connection (line-transport.ts says why not
 * HTTP): how one agent process shares one crow-mcp among all its sessions. The socket lives in a directory only its
 * user can enter, and nothing listens on the network. That directory is hidden from every session's sandbox
 * (`hideFromSandbox`), and with a `secret` a connection must also prove it comes from the agent that started crow-mcp:
 * a sandboxed shell that reached the socket anyway (a bind it was given, a TMPDIR inside a writable root) could
 * otherwise open a session of its own, unconfined. This module itself needs nothing but
 * node:net and the line framing, so crow-mcp says it listens before the MCP SDK, zod and the tools are compiled
 * (socket-sessions.ts, loaded right after): the agent that waits for that line goes on ~100 ms sooner, and its first
 * messages wait only for what is left to load.
 */
import { chmodSync } from "node:fs";
import { createServer as createNetServer, type Server, type Socket } from "node:net";
import path from "node:path";
import { errorText } from "./error-text.js";
import { SocketLineTransport } from "./line-transport.js";
import { log } from "./log.js";
import type { ServerOptions } from "./server.js";
import type { SocketSessions } from "./socket-sessions.js";
import { warmUp } from "./warm-up.js";

/** A running unix-socket front. */
export interface RunningSocketServer {
  readonly socketPath: string;
  sessionCount(): number;
  /** Closes every session (killing their shells) and stops listening. */
  close(): Promise<void>;
}

/** Answers the first message of a connection with `message` (as an error) and ends the connection. */
function refuseConnection(socket: Socket, message: string): void {
  const transport = new SocketLineTransport(socket);
  transport.onmessage = (first) => transport.refuse(first, -32603, message);
}

/** Serves crow-mcp's MCP sessions on the unix socket `socketPath` (which must not exist yet). */
export async function startSocketServer(
  socketPath: string,
  options: ServerOptions & {
    /** How long a session with nothing in flight may stay silent before it is ended (socket-sessions.ts). */
    sessionIdleMs?: number;
    /**
     * Once listening and loaded, and if no client has connected yet, open a session on the socket, list the tools,
     * make one tool call and end it (warm-up.ts): a first session that comes later finds that code compiled.
     */
    warmUp?: boolean;
    /**
     * The secret every connection's `initialize` must carry in `_meta["crow/secret"]` (the agent hands it over on
     * crow-mcp's stdin; connections wait until it has arrived). Without one, any connection may open a session.
     */
    secret?: Promise<string>;
  } = {},
): Promise<RunningSocketServer> {
  // No sandbox of any session may see the socket's directory, whatever policy its client sends.
  const { secret: _secret, ...rest } = options;
  const served = {
    ...rest,
    hideFromSandbox: [...(options.hideFromSandbox ?? []), path.dirname(path.resolve(socketPath))],
  };
  // The SDK and the tools load only once the socket listens (see below); a connection that comes earlier waits for
  // them (its socket stays paused, its bytes buffered, until it is accepted).
  let table: Promise<SocketSessions> | undefined;
  const sessions = (): Promise<SocketSessions> =>
    (table ??= Promise.all([
      import("./socket-sessions.js").catch((error: unknown) => {
        throw new Error(
          `crow-mcp could not load its tools (${errorText(error)}); its installation is incomplete: reinstall crow`,
        );
      }),
      options.secret,
    ]).then(([loaded, secret]) =>
      loaded.createSocketSessions({ ...served, ...(secret !== undefined ? { secret } : {}) }),
    ));
  let asked = false;
  // Every open connection, so that close() can end them: a net server's close waits for its connections, and one
  // whose peer waits for an answer the closed sessions will never send (the warm-up's own) would hold it forever.
  const connections = new Set<Socket>();
  const server: Server = createNetServer((socket) => {
    asked = true;
    connections.add(socket);
    socket.once("close", () => connections.delete(socket));
    sessions().then(
      (loaded) => loaded.accept(socket),
      (error: unknown) => refuseConnection(socket, errorText(error)),
    );
  });
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
  // connects while this loads, and its first messages wait only for what is left of it. Then, if still idle, warm up.
  let count = () => 0;
  setImmediate(() => {
    sessions().then(
      async (loaded) => {
        count = () => loaded.count();
        // A client that is already asking warms the same code itself; a warm-up would only compete with it.
        if (options.warmUp && !asked) await warmUp(socketPath, await options.secret);
      },
      (error: unknown) => log.error(errorText(error)),
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
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of connections) socket.destroy();
      await closed;
    },
  };
}
