/**
 * Steering: the user's messages for a session's running prompt turn. Each prompt turn gets one inbox; the loop takes
 * what waits before each request (loop/types.ts, `TurnInbox`), and closes it in the tick it decides to stop. A steer
 * is therefore either accepted by an open inbox, and in a request of that turn unless the turn is cancelled or fails
 * first (then it is dropped and the session says so), or refused because no turn takes it: it never outlives its turn
 * and never starts one.
 */
import { randomUUID } from "node:crypto";
import type { StopReason } from "../hooks/types.js";
import type { TurnInbox } from "../loop/types.js";
import type { ContentPart, UserMessage } from "../messages.js";

export class SteerInbox implements TurnInbox {
  private readonly queue: UserMessage[] = [];
  private open = true;

  /** @param dropped told the steers a closing turn leaves unseen (with why the turn stopped). */
  constructor(private readonly dropped: (messages: UserMessage[], reason: StopReason) => void) {}

  /** Queues a steer; false once the turn takes no more. */
  push(content: string | ContentPart[], original?: unknown): boolean {
    if (!this.open) return false;
    const id = randomUUID();
    this.queue.push(original === undefined ? { role: "user", id, content } : { role: "user", id, content, original });
    return true;
  }

  waiting(): boolean {
    return this.queue.length > 0;
  }

  take(): UserMessage[] {
    return this.queue.splice(0, this.queue.length);
  }

  close(reason: StopReason): void {
    if (!this.open) return;
    this.open = false;
    const left = this.take();
    if (left.length > 0) this.dropped(left, reason);
  }
}

/** The notice for steers a turn ended without sending to the model. */
export function droppedNotice(count: number, reason: StopReason): string {
  const what = count === 1 ? "1 steering message was" : `${count} steering messages were`;
  const why = reason === "cancelled" ? "the turn was cancelled" : `the turn stopped (${reason})`;
  return `${what} not sent to the model: ${why} before its next request. Send it again as a prompt.`;
}
