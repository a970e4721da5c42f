/**
 * One session's prompt turns over ACP. At most one runs at a time; a prompt that arrives while a turn runs is
 * refused (-32600), except after `session/cancel`: a client may send the next prompt right away, before the cancelled
 * prompt's response, so that prompt waits until the cancelled turn has ended and then runs.
 */
import { RequestError } from "@agentclientprotocol/sdk";

/** The running turn, as its prompt sees it. */
export interface TurnTicket {
  /** Whether `session/cancel` arrived for it (also before the runtime turn started). */
  readonly cancelled: boolean;
  /** Aborted when `session/cancel` arrives: stops what the turn does before the runtime runs (reading its content). */
  readonly signal: AbortSignal;
  /** The runtime's turn has started (it takes steers from now on). */
  started(): void;
  /** Ends the turn: a prompt waiting behind it may start. */
  end(): void;
}

interface Running {
  cancelled: boolean;
  cancel: AbortController;
  ended: Promise<void>;
  /** Resolves true when the runtime's turn started, false when the prompt ended without one. */
  started: Promise<boolean>;
  start: (started: boolean) => void;
}

export class TurnGate {
  private running: Running | undefined;

  /** Starts a turn once the gate is free (waiting for a cancelled turn to end); throws when another one runs. */
  async enter(): Promise<TurnTicket> {
    while (this.running) {
      if (!this.running.cancelled) {
        throw RequestError.invalidRequest(undefined, "a prompt is already running in this session; cancel it first");
      }
      await this.running.ended;
    }
    let end = () => {};
    let start: (started: boolean) => void = () => {};
    const running: Running = {
      cancelled: false,
      cancel: new AbortController(),
      ended: new Promise((resolve) => (end = resolve)),
      started: new Promise((resolve) => (start = resolve)),
      start: (started) => start(started),
    };
    this.running = running;
    return {
      get cancelled() {
        return running.cancelled;
      },
      signal: running.cancel.signal,
      started: () => running.start(true),
      end: () => {
        if (this.running === running) this.running = undefined;
        running.start(false);
        end();
      },
    };
  }

  /**
   * Resolves once the prompt holding the gate has its runtime turn (true) or ended without one (false); at once with
   * false when no prompt holds it. A steer sent right after its prompt waits for the prompt's content to be read.
   */
  turnStarted(): Promise<boolean> {
    return this.running?.started ?? Promise.resolve(false);
  }

  /** Marks the running turn cancelled (the caller also cancels the runtime's turn). */
  cancel(): void {
    if (!this.running) return;
    this.running.cancelled = true;
    this.running.cancel.abort();
  }
}
