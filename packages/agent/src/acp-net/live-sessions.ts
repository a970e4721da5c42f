/**
 * Which connection holds which live session, across the connections of one `crow acp --listen`, and what happens to
 * a turn whose client drops. Every connection has its own agent (its own sessions, client capabilities, permission
 * questions), but they share the runtime and its store: a stored session is anyone's to open, a live one belongs to
 * the connection that opened it until that connection closes it or goes away. Without this, a second client's
 * `session/load` would close the first client's live session under it (the runtime keeps one live copy).
 *
 * It sits between the transport and the agent as a filter on the JSON-RPC messages: it learns ownership from the
 * agent's answers (session/new, load, resume, fork; close and delete end it) and refuses load, resume, close and
 * delete of a session another connection holds, answering in the agent's place.
 *
 * A client that drops while a turn runs (its connection ends with a `session/prompt` unanswered): the agent is kept,
 * and the turn goes on without the client for up to the grace period (then it is cancelled). Questions it asks the
 * client meanwhile (permission, fs, terminal) are answered with an error, so a turn that needs the client ends
 * there. A `session/load` or `session/resume` of that session on a new connection waits for the turn to end, then
 * opens it: the load replays the whole turn, the part that ran while the client was away included.
 */
import type { AnyMessage, Stream } from "@agentclientprotocol/sdk";
import { log } from "../base/log.js";

/** How long a turn whose client dropped goes on without it. */
export const RECONNECT_GRACE_MS = 30_000;

/** The methods that take over or end a live session. */
const GUARDED = new Set(["session/load", "session/resume", "session/close", "session/delete"]);
/** The methods whose success gives the caller a live session (by their answer's or their request's id). */
const OPENING = new Set(["session/new", "session/load", "session/resume", "session/fork"]);
const ENDING = new Set(["session/close", "session/delete"]);

type Message = Record<string, unknown>;

/** One connection, as an owner of sessions. */
interface Holder {
  /** While its client is gone and a turn still runs: resolves once the connection let go of its sessions. */
  parked?: Promise<void>;
}

function idKey(id: unknown): string | undefined {
  return typeof id === "string" || typeof id === "number" ? `${typeof id}:${id}` : undefined;
}

function sessionIdOf(value: unknown): string | undefined {
  const id = (value as { sessionId?: unknown } | null | undefined)?.sessionId;
  return typeof id === "string" ? id : undefined;
}

function errorAnswer(id: unknown, message: string): AnyMessage {
  return { jsonrpc: "2.0", id: id as string | number, error: { code: -32600, message } } as AnyMessage;
}

/** The live sessions of a server's connections. */
export class LiveSessions {
  private readonly owners = new Map<string, Holder>();

  constructor(private readonly graceMs = RECONNECT_GRACE_MS) {}

  /**
   * `stream` (a connection's transport) as its agent should see it. `release()` lets go of everything the
   * connection holds: call it once its agent closed its sessions.
   */
  filter(stream: Stream): { stream: Stream; release: () => void } {
    const holder: Holder = {};
    /** Requests whose answer changes ownership, by id. */
    const pending = new Map<string, { method: string; sessionId: string | undefined }>();
    /** The prompts the agent has not answered yet, by id: their sessions. */
    const prompts = new Map<string, string>();
    const writer = stream.writable.getWriter();
    let attached = true;
    let whenIdle: (() => void) | undefined;
    let released: () => void = () => {};

    let input!: ReadableStreamDefaultController<AnyMessage>;
    let ended = false;
    const inbound = new ReadableStream<AnyMessage>({
      start: (controller) => {
        input = controller;
      },
    });
    const endInput = () => {
      if (ended) return;
      ended = true;
      input.close();
    };
    const toAgent = (message: AnyMessage) => {
      if (!ended) input.enqueue(message);
    };

    /** Whether a client message goes on to the agent (false: answered here). */
    const admit = async (m: Message): Promise<boolean> => {
      const method = typeof m.method === "string" ? m.method : undefined;
      const key = idKey(m.id);
      if (!method || key === undefined) return true;
      const sessionId = sessionIdOf(m.params);
      let owner = sessionId === undefined ? undefined : this.owners.get(sessionId);
      if (GUARDED.has(method) && owner?.parked && owner !== holder) {
        // Its client dropped mid-turn: opened here once that turn is over.
        await owner.parked;
        owner = sessionId === undefined ? undefined : this.owners.get(sessionId);
      }
      if (GUARDED.has(method) && owner !== undefined && owner !== holder) {
        await writer
          .write(
            errorAnswer(
              m.id,
              `session ${sessionId} is open on another connection to this agent; it can be opened here once that connection closes it (session/close) or disconnects`,
            ),
          )
          .catch(() => {});
        return false;
      }
      if (OPENING.has(method) || ENDING.has(method)) pending.set(key, { method, sessionId });
      if (method === "session/prompt" && sessionId !== undefined) prompts.set(key, sessionId);
      return true;
    };

    // The client's messages, until its connection ends.
    void (async () => {
      const reader = stream.readable.getReader();
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          if (await admit(value as Message)) toAgent(value);
        }
      } catch (error) {
        log.debug("an ACP connection ended with an error", error);
      }
      attached = false;
      if (prompts.size === 0) {
        endInput();
        return;
      }
      const sessions = [...new Set(prompts.values())];
      log.warn(
        `a client dropped while a turn ran (session ${sessions.join(", ")}): the turn goes on for up to ${Math.round(this.graceMs / 1000)} s; session/load on a new connection opens it once the turn is over`,
      );
      holder.parked = new Promise((resolve) => {
        released = resolve;
      });
      const timer = setTimeout(() => {
        for (const sessionId of sessions) toAgent({ jsonrpc: "2.0", method: "session/cancel", params: { sessionId } });
      }, this.graceMs);
      whenIdle = () => {
        clearTimeout(timer);
        endInput();
      };
    })();

    const outbound = new WritableStream<AnyMessage>({
      write: async (message) => {
        const m = message as Message;
        const key = m.method === undefined ? idKey(m.id) : undefined;
        const request = key === undefined ? undefined : pending.get(key);
        if (key !== undefined && request) {
          pending.delete(key);
          if (m.error === undefined) {
            const sessionId = sessionIdOf(m.result) ?? request.sessionId;
            if (sessionId !== undefined && OPENING.has(request.method)) this.owners.set(sessionId, holder);
            if (sessionId !== undefined && ENDING.has(request.method) && this.owners.get(sessionId) === holder)
              this.owners.delete(sessionId);
          }
        }
        if (key !== undefined) prompts.delete(key);
        if (attached) {
          // A client gone meanwhile: what it would have been sent is dropped, the agent carries on.
          await writer.write(message).catch((error: unknown) => log.debug("an ACP message could not be sent", error));
        } else if (typeof m.method === "string" && m.id !== undefined) {
          // Nobody to ask: the question fails, and the turn goes on or ends as it would on a failed answer.
          toAgent(errorAnswer(m.id, "the client disconnected"));
        }
        if (!attached && prompts.size === 0) whenIdle?.();
      },
      close: () => writer.close().catch(() => {}),
      abort: (reason) => writer.abort(reason).catch(() => {}),
    });

    const release = () => {
      for (const [sessionId, owner] of this.owners) if (owner === holder) this.owners.delete(sessionId);
      released();
    };
    return { stream: { readable: inbound, writable: outbound }, release };
  }
}
