/**
 * The only writer of one session's `session/update` notifications and of its questions to the user
 * (`session/request_permission`, `elicitation/create` and `elicitation/complete`). Every
 * message is handed to the connection in the order it was handed in here (the connection writes in call order), so
 * the wire order is the order of the session's events without timers or hand-offs to restore it.
 *
 * Streamed text is joined: the chunks of one kind (message or thought) and one message (`messageId`) handed in
 * during one turn of the event loop (every delta parsed from one network read) go out as one chunk when that turn
 * ends, or before any other message, whichever comes first. A fast provider's tiny deltas cost one JSON-RPC message per read, not one
 * each (the deltas of one read reach here a few microtasks apart, so the end of the turn is the first point that
 * has them all). This joins text only; it never reorders: any other message sends the pending text first.
 *
 * A session's subagent children (subagent-sessions.ts) write through their parent's outbox with their own session
 * id: one writer keeps the order ACP asks for (a child is announced on its parent before any update about it).
 */
import {
  type AgentContext,
  type CreateElicitationRequest,
  type CreateElicitationResponse,
  methods,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
  type SessionUpdate,
} from "@agentclientprotocol/sdk";
import type { SessionUpdate as UnstableSessionUpdate } from "@agentclientprotocol/sdk/unstable";
import { log } from "../base/log.js";
import { textChunk } from "./translate.js";

type TextKind = "agent_message_chunk" | "agent_thought_chunk";

/**
 * An update of the stable schema, or of the unstable one's subagent kinds (`subagent_update`, `session_message`),
 * which go only to clients that declared `clientCapabilities.subagents`.
 */
export type AnyUpdate = SessionUpdate | UnstableSessionUpdate;

/** An update about a given session (the outbox's own, or one of its subagent children). */
export interface AddressedUpdate {
  sessionId: string;
  update: AnyUpdate;
}

/** How a question waits: the signal withdraws it (`$/cancel_request`), and stops the wait for its answer. */
interface QuestionOptions {
  cancellationSignal: AbortSignal;
  stopWaitingOnCancel: boolean;
}

/** `elicitation/create` params of one of this session's questions (the outbox adds the session id). */
export type ElicitationParams =
  | { mode: "form"; message: string; toolCallId?: string; requestedSchema: CreateElicitationFormSchema }
  | { mode: "url"; message: string; toolCallId?: string; elicitationId: string; url: string };
type CreateElicitationFormSchema = Extract<CreateElicitationRequest, { mode: "form" }>["requestedSchema"];

export class Outbox {
  /** Settles once everything handed to the connection so far was written (or failed to be). */
  private last: Promise<void>;
  /** Text not yet handed to the connection: text of its kind that arrives meanwhile joins it. */
  private text: { kind: TextKind; text: string; messageId: string | undefined; sessionId: string } | undefined;
  private held = true;
  /** Messages that came while the outbox was held (before the session's id was answered). */
  private waiting: Array<() => void> = [];

  /**
   * @param opened Resolves when messages about the session may go out: once the response that tells the client its
   *   id was queued (an update for an unknown session would be dropped). Until then messages wait, in order.
   */
  constructor(
    private readonly client: AgentContext,
    private readonly sessionId: string,
    private readonly opened: Promise<void> = Promise.resolve(),
  ) {
    this.last = opened;
    void opened.then(() => {
      this.held = false;
      for (const send of this.waiting.splice(0)) send();
    });
  }

  /** Queues one update (about `sessionId`: this session's unless one of its subagent children's). */
  send(update: AnyUpdate, sessionId: string = this.sessionId): void {
    const kind = update.sessionUpdate;
    if ((kind === "agent_message_chunk" || kind === "agent_thought_chunk") && update.content.type === "text") {
      const messageId = update.messageId ?? undefined;
      const text = this.text;
      if (text?.kind === kind && text.messageId === messageId && text.sessionId === sessionId) {
        text.text += update.content.text;
        return;
      }
      this.flushText();
      this.text = { kind, text: update.content.text, messageId, sessionId };
      const pending = this.text;
      setImmediate(() => {
        if (this.text === pending) this.flushText();
      });
      return;
    }
    this.flushText();
    this.out(() => this.notify(update, sessionId));
  }

  /**
   * Sends updates exactly as given (a replayed history: its chunks stay the messages they were); addressed ones go
   * to their own session (a replayed subagent child's history).
   */
  sendEach(updates: ReadonlyArray<SessionUpdate | AddressedUpdate>): void {
    this.flushText();
    for (const item of updates) {
      if ("sessionUpdate" in item) this.out(() => this.notify(item, this.sessionId));
      else this.out(() => this.notify(item.update, item.sessionId));
    }
  }

  /**
   * Asks the client a permission question after everything handed in before it (the tool call it is about, its
   * proposal). Resolves with the answer; rejects when the request fails.
   */
  ask(
    params: Omit<RequestPermissionRequest, "sessionId">,
    options: QuestionOptions,
  ): Promise<RequestPermissionResponse> {
    return this.question(() =>
      this.client.request(methods.client.session.requestPermission, { sessionId: this.sessionId, ...params }, options),
    );
  }

  /**
   * Puts a question to the user (`elicitation/create`, scoped to this session) after everything handed in before it
   * (the tool call that waits for it). Resolves with the answer; rejects when the request fails or is withdrawn.
   */
  elicit(params: ElicitationParams, options: QuestionOptions): Promise<CreateElicitationResponse> {
    return this.question(() =>
      this.client.request(methods.client.elicitation.create, { sessionId: this.sessionId, ...params }, options),
    );
  }

  /** Tells the client a URL question is done (`elicitation/complete`), after everything handed in before. */
  completeElicitation(elicitationId: string): void {
    this.flushText();
    this.out(() => {
      this.last = this.client
        .notify(methods.client.elicitation.complete, { elicitationId })
        .catch((error: unknown) => log.debug("elicitation/complete not delivered", error));
    });
  }

  /** Sends a request in order (after the pending text) and resolves with its answer. */
  private question<T>(request: () => Promise<T>): Promise<T> {
    this.flushText();
    return new Promise((resolve, reject) => {
      this.out(() => {
        request().then(resolve, reject);
      });
    });
  }

  /** Resolves once everything handed in so far was written. */
  written(): Promise<void> {
    this.flushText();
    // While held: the messages waiting are handed over when it opens (that callback runs first), then awaited.
    return this.held ? this.opened.then(() => this.last) : this.last;
  }

  private flushText(): void {
    const pending = this.text;
    if (!pending) return;
    this.text = undefined;
    const { kind, text, messageId, sessionId } = pending;
    this.out(() => this.notify(textChunk(kind, text, messageId), sessionId));
  }

  private out(send: () => void): void {
    if (this.held) this.waiting.push(send);
    else send();
  }

  private notify(update: AnyUpdate, sessionId: string): void {
    // The connection is typed with the stable schema; the unstable kinds are sent only to clients that declared them.
    this.last = this.client
      .notify(methods.client.session.update, { sessionId, update: update as SessionUpdate })
      .catch((error: unknown) => log.debug("session/update not delivered", error));
  }
}
