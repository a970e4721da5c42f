/**
 * One session's prompt turns over ACP. At most one runs at a time; a prompt that arrives while a turn runs is queued
 * and runs after the ones before it, each answering for itself. `session/cancel` cancels the running turn and every
 * prompt queued so far (each answers `cancelled`; a prompt sent after the cancel runs once the cancelled turn has
 * ended); `$/cancel_request` on a queued prompt takes just that one out of the queue.
 */

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
  /** Resolves true when the runtime's turn started, false when the prompt ended without one. */
  started: Promise<boolean>;
  start: (started: boolean) => void;
}

/** A prompt waiting for its turn. */
interface Waiting {
  cancelled: boolean;
}

export class TurnGate {
  private running: Running | undefined;
  private readonly queue: Waiting[] = [];
  /** Counts `session/cancel`s: a prompt received before one is cancelled by it, even if it is not queued yet. */
  private cancels = 0;
  /** Wakes the queued prompts to look again (a turn ended, a cancel came). */
  private wake: () => void = () => {};
  private changed: Promise<void> = this.nextChange();

  private nextChange(): Promise<void> {
    return new Promise((resolve) => {
      this.wake = () => {
        this.changed = this.nextChange();
        resolve();
      };
    });
  }

  /** How many prompts wait behind the running turn. */
  get queued(): number {
    return this.queue.length;
  }

  /**
   * Where a prompt stands as it is received (call it before any await: prompts are received in wire order): a
   * `session/cancel` after this moment cancels it, also while it is still reading what it needs to queue.
   */
  receipt(): number {
    return this.cancels;
  }

  /**
   * Starts a turn once the ones before it have ended; undefined when the prompt was cancelled before it started
   * (a `session/cancel` after its `receipt`, or `signal`: its own request cancelled).
   */
  async enter(receipt: number, signal?: AbortSignal): Promise<TurnTicket | undefined> {
    const waiting: Waiting = { cancelled: receipt !== this.cancels };
    this.queue.push(waiting);
    const onAbort = () => {
      waiting.cancelled = true;
      this.wake();
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    try {
      if (signal?.aborted) waiting.cancelled = true;
      while (!waiting.cancelled && (this.running || this.queue[0] !== waiting)) await this.changed;
    } finally {
      signal?.removeEventListener("abort", onAbort);
      this.queue.splice(this.queue.indexOf(waiting), 1);
      // The next in line may be first now.
      this.wake();
    }
    if (waiting.cancelled) return undefined;
    let start: (started: boolean) => void = () => {};
    const running: Running = {
      cancelled: false,
      cancel: new AbortController(),
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
        this.wake();
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

  /** Marks the running turn cancelled and cancels every queued prompt (the caller cancels the runtime's turn). */
  cancel(): void {
    this.cancels++;
    for (const waiting of this.queue) waiting.cancelled = true;
    if (this.running) {
      this.running.cancelled = true;
      this.running.cancel.abort();
    }
    this.wake();
  }
}
