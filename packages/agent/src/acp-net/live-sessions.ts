/**
 * Which connection holds which live session, across the connections of one `crow acp --listen`, and what happens to
 * a turn whose client drops. Every connection has its own agent (its own sessions, client capabilities, permission
 * questions), but they share the runtime and its store: a stored session is anyone's to open, a live one belongs to
 * the connection that opened it until that connection closes it or goes away. Without this, a second client's
 * `session/load` would close the first client's live session under it (the runtime keeps one live copy).
 *
 * It sits between the transport and the agent as a filter on the JSON-RPC messages: it learns ownership from the
 * agent's answers (session/new, load, resume, fork; close and delete end it), and every client message naming a
 * session goes through one check (session-claims.ts): refused, in the agent's place, unless the session is open on
 * the caller's connection (or, for load, resume, fork, close and delete, held by no connection). A request whose id
 * is not a string or a number (`null`) is refused: the SDK would run it, and its answer could not be told apart.
 *
 * A client that drops while a turn runs (its connection ends with a `session/prompt` unanswered): the agent is kept,
 * and the turn goes on without the client for up to the grace period (then it is cancelled). Questions it asks the
 * client meanwhile (permission, fs, terminal) are answered with an error, so a turn that needs the client ends
 * there. A `session/load` or `session/resume` of that session on a new connection waits for the turn to end, then
 * opens it: the load replays the whole turn, the part that ran while the client was away included.
 */
import type { AnyMessage, Stream } from "@agentclientprotocol/sdk";
import { log } from "../base/log.js";
import { claimRefusal, connectionLabel, namedSessions, TAKING } from "./session-claims.js";

/** How long a turn whose client dropped goes on without it. */
export const RECONNECT_GRACE_MS = 30_000;

/** The methods whose success gives the caller a live session (by their answer's or their request's id). */
const OPENING = new Set(["session/new", "session/load", "session/resume", "session/fork"]);
const ENDING = new Set(["session/close", "session/delete"]);

type Message = Record<string, unknown>;

/** One connection, as an owner of sessions. */
interface Holder {
  /** While its client is gone and a turn still runs: resolves once the connection let go of its sessions. */
  parked?: Promise<void>;
  /** How it is named to other clients (session-claims.ts). */
  label(): string;
}

function idKey(id: unknown): string | undefined {
  return typeof id === "string" || typeof id === "number" ? `${typeof id}:${id}` : undefined;
}

function sessionIdOf(value: unknown): string | undefined {
  const id = (value as { sessionId?: unknown } | null | undefined)?.sessionId;
  return typeof id === "string" ? id : undefined;
}

function errorAnswer(id: unknown, message: string, code = -32600): AnyMessage {
  return { jsonrpc: "2.0", id: id as string | number, error: { code, message } } as AnyMessage;
}

/** The live sessions of a server's connections. */
export class LiveSessions {
  /** Which connection holds each live session, by session id. */
  readonly owners = new Map<string, Holder>();
  /** How many connections were made: the next one's number. */
  connections = 0;

  constructor(readonly graceMs = RECONNECT_GRACE_MS) {}

  /**
   * `stream` (a connection's transport) as its agent should see it. `release()` lets go of everything the
   * connection holds: call it once its agent closed its sessions.
   */
  filter(stream: Stream): { stream: Stream; release: () => void } {
    const connection = new FilteredConnection(this, stream);
    return { stream: connection.stream, release: () => connection.release() };
  }
}

/** One connection seen through {@link LiveSessions}: the client's side, the agent's side, and what it holds. */
class FilteredConnection implements Holder {
  parked?: Promise<void>;
  /** The stream the agent is connected to. */
  readonly stream: Stream;
  /** Requests whose answer changes ownership, by id. */
  private readonly pending = new Map<string, { method: string; sessionId: string | undefined }>();
  /** The prompts the agent has not answered yet, by id: their sessions. */
  private readonly prompts = new Map<string, string>();
  private readonly writer: WritableStreamDefaultWriter<AnyMessage>;
  private attached = true;
  private whenIdle: (() => void) | undefined;
  private released: () => void = () => {};
  private input!: ReadableStreamDefaultController<AnyMessage>;
  private ended = false;
  private readonly number: number;
  private readonly since = new Date();
  /** What the client said it was at `initialize`. */
  private clientInfo: unknown;

  constructor(
    private readonly live: LiveSessions,
    client: Stream,
  ) {
    this.number = ++live.connections;
    this.writer = client.writable.getWriter();
    const inbound = new ReadableStream<AnyMessage>({
      start: (controller) => {
        this.input = controller;
      },
    });
    const outbound = new WritableStream<AnyMessage>({
      write: (message) => this.fromAgent(message),
      close: () => this.writer.close().catch(() => {}),
      abort: (reason) => this.writer.abort(reason).catch(() => {}),
    });
    this.stream = { readable: inbound, writable: outbound };
    void this.readClient(client.readable);
  }

  private endInput(): void {
    if (this.ended) return;
    this.ended = true;
    this.input.close();
  }

  private toAgent(message: AnyMessage): void {
    if (!this.ended) this.input.enqueue(message);
  }

  label(): string {
    const label = connectionLabel(this.number, this.since, this.clientInfo);
    return this.parked ? `${label.slice(0, -1)}, disconnected while its turn runs)` : label;
  }

  /** Answers a request in the agent's place (a notification gets no answer: the refusal is logged). */
  private async refuse(m: Message, method: string, code: number, message: string): Promise<false> {
    log.warn(`refused ${method} from ${this.label()}: ${message}`);
    if ("id" in m) await this.writer.write(errorAnswer(m.id, message, code)).catch(() => {});
    return false;
  }

  /** Whether a client message goes on to the agent (false: answered here). */
  private async admit(m: Message): Promise<boolean> {
    if (typeof m !== "object" || m === null || Array.isArray(m)) return true; // the SDK refuses it
    const method = typeof m.method === "string" ? m.method : undefined;
    if (!method) return true; // an answer to one of the agent's own requests
    const key = idKey(m.id);
    if ("id" in m && key === undefined) {
      return this.refuse(
        { id: null },
        method,
        -32600,
        `a request's id must be a string or a number, not ${JSON.stringify(m.id)} (a message without an id is a notification)`,
      );
    }
    if (method === "initialize") this.clientInfo = (m.params as { clientInfo?: unknown } | undefined)?.clientInfo;
    const { named, invalid } = namedSessions(m.params);
    if (invalid) return this.refuse(m, method, -32602, `${method}: ${invalid} must be a session id (a string)`);
    const owners = this.live.owners;
    for (const name of named) {
      let owner = owners.get(name.id);
      if (owner?.parked && owner !== this && name.key === "sessionId" && TAKING.has(method)) {
        // Its client dropped mid-turn: opened here once that turn is over.
        await owner.parked;
        owner = owners.get(name.id);
      }
      if (owner === this) continue;
      const refusal = claimRefusal(method, name, owner?.label());
      if (refusal) return this.refuse(m, method, refusal.code, refusal.message);
    }
    if (key === undefined) return true;
    const sessionId = sessionIdOf(m.params);
    if (OPENING.has(method) || ENDING.has(method)) this.pending.set(key, { method, sessionId });
    if (method === "session/prompt" && sessionId !== undefined) this.prompts.set(key, sessionId);
    return true;
  }

  /** The client's messages, until its connection ends. */
  private async readClient(readable: Stream["readable"]): Promise<void> {
    const reader = readable.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        if (await this.admit(value as Message)) this.toAgent(value);
      }
    } catch (error) {
      log.debug("an ACP connection ended with an error", error);
    }
    this.attached = false;
    if (this.prompts.size === 0) this.endInput();
    else this.park();
  }

  /** The client dropped while a turn ran: the turn goes on for the grace period, then it is cancelled. */
  private park(): void {
    const sessions = [...new Set(this.prompts.values())];
    const { graceMs } = this.live;
    log.warn(
      `a client dropped while a turn ran (session ${sessions.join(", ")}): the turn goes on for up to ${Math.round(graceMs / 1000)} s; session/load on a new connection opens it once the turn is over`,
    );
    this.parked = new Promise((resolve) => {
      this.released = resolve;
    });
    const timer = setTimeout(() => {
      for (const sessionId of sessions)
        this.toAgent({ jsonrpc: "2.0", method: "session/cancel", params: { sessionId } });
    }, graceMs);
    this.whenIdle = () => {
      clearTimeout(timer);
      this.endInput();
    };
  }

  /** A message of the agent: ownership learnt from its answers, then on to the client (or answered here if gone). */
  private async fromAgent(message: AnyMessage): Promise<void> {
    const m = message as Message;
    const key = m.method === undefined ? idKey(m.id) : undefined;
    const request = key === undefined ? undefined : this.pending.get(key);
    if (key !== undefined && request) {
      this.pending.delete(key);
      if (m.error === undefined) this.owns(sessionIdOf(m.result) ?? request.sessionId, request.method);
    }
    if (key !== undefined) this.prompts.delete(key);
    if (this.attached) {
      // A client gone meanwhile: what it would have been sent is dropped, the agent carries on.
      await this.writer.write(message).catch((error: unknown) => log.debug("an ACP message could not be sent", error));
    } else if (typeof m.method === "string" && m.id !== undefined) {
      // Nobody to ask: the question fails, and the turn goes on or ends as it would on a failed answer.
      this.toAgent(errorAnswer(m.id, "the client disconnected"));
    }
    if (!this.attached && this.prompts.size === 0) this.whenIdle?.();
  }

  /** After a successful `method` about `sessionId`: this connection holds it (opening) or no longer does (ending). */
  private owns(sessionId: string | undefined, method: string): void {
    if (sessionId === undefined) return;
    const owners = this.live.owners;
    if (OPENING.has(method)) owners.set(sessionId, this);
    if (ENDING.has(method) && owners.get(sessionId) === this) owners.delete(sessionId);
  }

  release(): void {
    for (const [sessionId, owner] of this.live.owners) if (owner === this) this.live.owners.delete(sessionId);
    this.released();
  }
}
