/**
 * Which connection holds which live session, across the connections of one `crow acp --listen`. Every connection
 * has its own agent (its own sessions, client capabilities, permission questions), but they share the runtime and
 * its store: a stored session is anyone's to open, a live one belongs to the connection that opened it until that
 * connection closes it or goes away. Without this, a second client's `session/load` would close the first client's
 * live session under it (the runtime keeps one live copy of a session).
 *
 * It sits between the transport and the agent as a filter on the JSON-RPC messages: it learns ownership from the
 * agent's answers (session/new, load, resume, fork; close and delete end it) and refuses load, resume, close and
 * delete of a session another connection holds, answering in the agent's place.
 */
import type { AnyMessage, Stream } from "@agentclientprotocol/sdk";

/** The methods that take over or end a live session. */
const GUARDED = new Set(["session/load", "session/resume", "session/close", "session/delete"]);
/** The methods whose success gives the caller a live session (by their answer's or their request's id). */
const OPENING = new Set(["session/new", "session/load", "session/resume", "session/fork"]);
const ENDING = new Set(["session/close", "session/delete"]);

type Message = Record<string, unknown>;

function idKey(id: unknown): string | undefined {
  return typeof id === "string" || typeof id === "number" ? `${typeof id}:${id}` : undefined;
}

function sessionIdOf(value: unknown): string | undefined {
  const id = (value as { sessionId?: unknown } | null | undefined)?.sessionId;
  return typeof id === "string" ? id : undefined;
}

/** The live sessions of a server's connections. */
export class LiveSessions {
  private readonly owners = new Map<string, object>();

  /** The number of live sessions held (all connections). */
  get size(): number {
    return this.owners.size;
  }

  /**
   * `stream` (a connection's transport) as its agent should see it: requests to take over another connection's live
   * session are answered with an error and never reach the agent. `release()` lets go of everything the connection
   * holds (call it once its agent closed its sessions); the end of the agent's output does it too.
   */
  filter(stream: Stream): { stream: Stream; release: () => void } {
    const connection = {};
    const pending = new Map<string, { method: string; sessionId: string | undefined }>();
    const writer = stream.writable.getWriter();
    const release = () => {
      for (const [sessionId, owner] of this.owners) if (owner === connection) this.owners.delete(sessionId);
    };
    const inbound = stream.readable.pipeThrough(
      new TransformStream<AnyMessage, AnyMessage>({
        transform: async (message, controller) => {
          const m = message as Message;
          const method = typeof m.method === "string" ? m.method : undefined;
          const key = idKey(m.id);
          if (!method || key === undefined) {
            controller.enqueue(message);
            return;
          }
          const sessionId = sessionIdOf(m.params);
          const owner = sessionId === undefined ? undefined : this.owners.get(sessionId);
          if (GUARDED.has(method) && owner !== undefined && owner !== connection) {
            await writer.write({
              jsonrpc: "2.0",
              id: m.id as string | number,
              error: {
                code: -32600,
                message: `session ${sessionId} is open on another connection to this agent; it can be opened here once that connection closes it (session/close) or disconnects`,
              },
            } as AnyMessage);
            return;
          }
          if (OPENING.has(method) || ENDING.has(method)) pending.set(key, { method, sessionId });
          controller.enqueue(message);
        },
      }),
    );
    const outbound = new WritableStream<AnyMessage>({
      write: async (message) => {
        const m = message as Message;
        const key = m.method === undefined ? idKey(m.id) : undefined;
        const request = key === undefined ? undefined : pending.get(key);
        if (key !== undefined && request) {
          pending.delete(key);
          if (m.error === undefined) {
            const sessionId = sessionIdOf(m.result) ?? request.sessionId;
            if (sessionId !== undefined && OPENING.has(request.method)) this.owners.set(sessionId, connection);
            if (sessionId !== undefined && ENDING.has(request.method) && this.owners.get(sessionId) === connection)
              this.owners.delete(sessionId);
          }
        }
        await writer.write(message);
      },
      close: async () => {
        release();
        await writer.close();
      },
      abort: async (reason) => {
        release();
        await writer.abort(reason);
      },
    });
    return { stream: { readable: inbound, writable: outbound }, release };
  }
}
