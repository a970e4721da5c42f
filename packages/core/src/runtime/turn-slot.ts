/**
 * A session's turn bookkeeping: at most one piece of work at a time (a prompt turn, or compact, clear and rewind
 * between turns), how the running one is cancelled and steered, when it has ended, and the session being taken over
 * by another process. session.ts owns the session and asks this whether it is busy; turn.ts runs what happens inside
 * a turn.
 */
import { SessionBusyError, type SteerOutcome } from "../api/types.js";
import type { ContentPart } from "../messages.js";
import { droppedNotice, SteerInbox } from "./steering.js";
import type { SessionWork } from "./turn.js";

/** Refusals while the slot is taken, as the host shows them. */
const PROMPT_BUSY = "A prompt is already running in this session; cancel it first.";
const BETWEEN_BUSY = "A prompt is running in this session; stop it first (/stop) or wait.";

export class TurnSlot {
  private current: SessionWork | undefined;
  /** Settles when the running prompt turn has ended and queued its last writes (close waits for it). */
  private ended: Promise<unknown> = Promise.resolve();
  /** Why the session may not run turns any more (another process took it over), once that happened. */
  private takenOver: string | undefined;

  /** Whether a prompt turn or work between turns holds the session. */
  get running(): boolean {
    return this.current !== undefined;
  }

  /**
   * Takes the slot for a prompt turn, with an inbox for its steers (`dropped` says what a cancel left unread).
   * Throws {@link SessionBusyError} while the slot is taken or after the session was taken over.
   */
  beginPrompt(dropped: (message: string) => void): SessionWork {
    const turn = this.begin(PROMPT_BUSY);
    turn.steering = new SteerInbox((left, reason) => dropped(droppedNotice(left.length, reason)));
    return turn;
  }

  /** Records `ended`, the running prompt turn's end, which {@link settled} waits for (failed or not). */
  track(ended: Promise<unknown>): void {
    this.ended = ended.catch(() => undefined);
  }

  /** Frees the slot: the turn or the work between turns ended. */
  end(): void {
    this.current = undefined;
  }

  /** Resolves once the last prompt turn has ended. */
  settled(): Promise<unknown> {
    return this.ended;
  }

  /** Work between turns (compact, clear, rewind): refused while a turn runs, the session busy meanwhile. */
  async between<T>(work: (turn: SessionWork) => Promise<T>): Promise<T> {
    const turn = this.begin(BETWEEN_BUSY);
    try {
      return await work(turn);
    } finally {
      this.end();
    }
  }

  /** Hands `content` to the running prompt turn: "injected", or "idle" when no turn takes steers. */
  steer(content: string | ContentPart[], original?: unknown): SteerOutcome {
    const inbox = this.current?.steering;
    return inbox instanceof SteerInbox && inbox.push(content, original) ? "injected" : "idle";
  }

  /** Cancels the running work; false when nothing runs. */
  cancel(): boolean {
    if (!this.current) return false;
    this.current.cancelled = true;
    this.current.controller.abort();
    return true;
  }

  /** Another process took the session over: the running turn stops, and every later begin is refused with `why`. */
  lose(why: string): void {
    this.takenOver = why;
    this.cancel();
  }

  /** Marks the session busy for a turn or for work between turns. */
  private begin(busy: string): SessionWork {
    // Not busy with a turn, but unavailable all the same: the host answers it like a busy session, with this message.
    if (this.takenOver) throw new SessionBusyError(this.takenOver);
    if (this.current) throw new SessionBusyError(busy);
    const turn: SessionWork = { controller: new AbortController(), cancelled: false };
    this.current = turn;
    return turn;
  }
}
