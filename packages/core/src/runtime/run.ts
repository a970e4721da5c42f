/**
 * A running prompt turn as the runtime hands it out: an async iterable of the turn's events and a `result` promise.
 *
 * By default the run keeps its turn's events from `prompt()` on (it subscribes to the session's one stream,
 * `CrowSession.subscribe`, for the turn's length), so an iteration started late — after an `await`, or after `result`
 * settled — still gets every event of the turn, in order, then the live ones. A run hands its events out once: the
 * first iterator takes them (each is let go once read; breaking out lets go of the rest and cancels the turn), and a
 * second iteration throws `RunIterationError`. A run nobody iterates holds its turn's events until the run object
 * itself is dropped, so a host that reads the session's stream (the ACP layer) and only awaits `result` prompts with
 * `{ events: false }`: the run keeps nothing, and iterating it throws.
 */

import { type CrowEvent, type PromptResult, type PromptRun, RunIterationError } from "../api/types.js";
import { EventChannel } from "../loop/channel.js";

/** Subscribes a listener to the session's stream; returns the unsubscribe function. */
type Subscribe = (listener: (event: CrowEvent) => void) => () => void;

/** What the run shows of its turn: `onEvent` as events happen, and whether it keeps them for an iterator. */
export interface RunViews {
  onEvent?: (event: CrowEvent) => void;
  /** False: the run keeps no events (iterating it throws). */
  events: boolean;
}

export class PromptRunImpl implements PromptRun {
  readonly result: Promise<PromptResult>;
  private settle!: { resolve: (r: PromptResult) => void; reject: (e: unknown) => void };
  private readonly unsubscribes: Array<() => void> = [];
  /** The turn's events not yet read by the iterator (each is let go once read); none with `events: false`. */
  private readonly kept: EventChannel<CrowEvent> | undefined;
  private iterated = false;
  private done = false;

  constructor(
    private readonly onCancel: () => void,
    subscribe: Subscribe,
    views: RunViews,
  ) {
    this.result = new Promise<PromptResult>((resolve, reject) => {
      this.settle = { resolve, reject };
    });
    // Nobody has to await `result` (iterating is enough): never an unhandled rejection.
    this.result.catch(() => {});
    const { onEvent } = views;
    if (onEvent) {
      this.unsubscribes.push(
        subscribe((event) => {
          try {
            onEvent(event);
          } catch {
            // A listener's failure must not break the turn.
          }
        }),
      );
    }
    if (views.events) {
      // Breaking out of the iteration cancels the turn (only while it runs: never a later turn of the session).
      const kept = new EventChannel<CrowEvent>(() => this.cancel());
      this.kept = kept;
      this.unsubscribes.push(subscribe((event) => kept.push(event)));
    }
  }

  /** A run whose turn could not start: `result` rejects with `error`, the iteration is empty. */
  static refused(error: unknown): PromptRunImpl {
    const run = new PromptRunImpl(
      () => {},
      () => () => {},
      { events: true },
    );
    run.fail(error);
    return run;
  }

  finish(result: PromptResult): void {
    this.end();
    this.settle.resolve(result);
  }

  fail(error: unknown): void {
    this.end();
    this.settle.reject(error);
  }

  /** The turn is over: no more events; what was kept stays for the iterator (or until the run is dropped). */
  private end(): void {
    this.done = true;
    for (const unsubscribe of this.unsubscribes.splice(0)) unsubscribe();
    this.kept?.close();
  }

  /** Cancels the turn while it runs; after it ended this does nothing (the session may run another turn). */
  cancel(): void {
    if (!this.done) this.onCancel();
  }

  /**
   * Every event of the turn from its start, in order: those kept so far, then the live ones until the turn ends.
   * Once per run: a second call throws, as does any call on a run prompted with `{ events: false }`.
   */
  [Symbol.asyncIterator](): AsyncIterator<CrowEvent> {
    const kept = this.kept;
    if (!kept || this.iterated) {
      throw new RunIterationError(
        kept
          ? "This run was already iterated: a run hands its events to one iterator. To read a turn's events more than once, use session.subscribe() or the onEvent prompt option."
          : "This run was prompted with { events: false } and keeps no events to iterate: read them through session.subscribe() or the onEvent prompt option, or prompt without events: false.",
      );
    }
    this.iterated = true;
    return kept[Symbol.asyncIterator]();
  }
}
