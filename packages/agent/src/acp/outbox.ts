/**
 * The only writer of one session's `session/update` notifications and `session/request_permission` requests. Every
 * message goes out in the order it was handed in, one after the other (each waits until the one before it was
 * written), so the wire order is the order of the session's events without timers or hand-offs to restore it.
 *
 * Streamed text is batched by that same wait: the chunks of one kind (message or thought) that arrive while the
 * message before them is being written go out as one `agent_message_chunk` (a fast provider's tiny deltas cost one
 * JSON-RPC message per write, not one each).
 */
import {
  type AgentContext,
  methods,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
  type SessionUpdate,
} from "@agentclientprotocol/sdk";
import { log } from "../log.js";

type TextKind = "agent_message_chunk" | "agent_thought_chunk";

export class Outbox {
  /** Settles once everything handed in so far was written (or failed to be). */
  private tail: Promise<void> = Promise.resolve();
  /** The text chunk queued and not yet written: text of its kind that arrives meanwhile joins it. */
  private text: { kind: TextKind; text: string } | undefined;

  /**
   * @param opened Resolves when messages about the session may go out: once the response that tells the client its
   *   id was queued (an update for an unknown session would be dropped).
   */
  constructor(
    private readonly client: AgentContext,
    private readonly sessionId: string,
    opened: Promise<void> = Promise.resolve(),
  ) {
    this.tail = opened;
  }

  /** Queues updates exactly as given (a replayed history: its chunks stay the messages they were). */
  sendEach(updates: readonly SessionUpdate[]): void {
    this.text = undefined;
    for (const update of updates) this.enqueue(() => this.notify(update));
  }

  /** Queues one update. */
  send(update: SessionUpdate): void {
    const kind = update.sessionUpdate;
    if ((kind === "agent_message_chunk" || kind === "agent_thought_chunk") && update.content.type === "text") {
      if (this.text?.kind === kind) {
        this.text.text += update.content.text;
        return;
      }
      const pending = { kind, text: update.content.text };
      this.text = pending;
      this.enqueue(() => {
        if (this.text === pending) this.text = undefined;
        return this.notify({ sessionUpdate: pending.kind, content: { type: "text", text: pending.text } });
      });
      return;
    }
    // Later text must not join a chunk queued before this update.
    this.text = undefined;
    this.enqueue(() => this.notify(update));
  }

  /**
   * Asks the client a permission question after everything queued before it (the tool call it is about, its
   * proposal) was written. Resolves with the answer; rejects when the request fails.
   */
  ask(
    params: Omit<RequestPermissionRequest, "sessionId">,
    options: { cancellationSignal: AbortSignal; stopWaitingOnCancel: boolean },
  ): Promise<RequestPermissionResponse> {
    this.text = undefined;
    return new Promise((resolve, reject) => {
      this.enqueue(async () => {
        // The queue waits for the question to be sent, not answered: updates go on while the user thinks.
        this.client
          .request(methods.client.session.requestPermission, { sessionId: this.sessionId, ...params }, options)
          .then(resolve, reject);
      });
    });
  }

  /** Resolves once everything handed in so far was written. */
  written(): Promise<void> {
    return this.tail;
  }

  private enqueue(step: () => Promise<void>): void {
    this.tail = this.tail.then(step);
  }

  private notify(update: SessionUpdate): Promise<void> {
    return this.client
      .notify(methods.client.session.update, { sessionId: this.sessionId, update })
      .catch((error: unknown) => log.debug("session/update not delivered", error));
  }
}
