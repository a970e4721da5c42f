import type { SessionUpdate } from "@agentclientprotocol/sdk";

/**
 * Coalesces consecutive text chunks of the same kind (message or thought) that arrive within one event-loop turn
 * into a single `session/update`: a fast provider's tiny deltas cost one JSON-RPC message per tick instead of one
 * each. Order is preserved: any other update flushes the pending text first.
 */
export class UpdateQueue {
  private pending: { kind: "agent_message_chunk" | "agent_thought_chunk"; text: string } | undefined;
  private scheduled = false;

  constructor(private readonly deliver: (update: SessionUpdate) => void) {}

  push(update: SessionUpdate): void {
    const kind = update.sessionUpdate;
    if ((kind === "agent_message_chunk" || kind === "agent_thought_chunk") && update.content.type === "text") {
      if (this.pending && this.pending.kind !== kind) this.flush();
      if (this.pending) this.pending.text += update.content.text;
      else this.pending = { kind, text: update.content.text };
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
      return;
    }
    this.flush();
    this.deliver(update);
  }

  /** Sends the pending text now. */
  flush(): void {
    this.scheduled = false;
    const pending = this.pending;
    if (!pending) return;
    this.pending = undefined;
    this.deliver({ sessionUpdate: pending.kind, content: { type: "text", text: pending.text } });
  }
}
