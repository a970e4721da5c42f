/**
 * A running prompt turn as the SDK hands it out: an async iterable of the turn's events and a `result` promise.
 * It is a view of the session's one event stream (`CrowSession.subscribe`) while the turn runs, not a store of its
 * own: events are queued for an iterator only once someone iterates (a host that listens to the session, like the
 * ACP layer, keeps nothing here). Breaking out of the iteration cancels the turn.
 */

import type { CrowEvent, PromptResult, PromptRun } from "../api/types.js";
import { EventChannel } from "../loop/channel.js";

/** Subscribes a listener to the session's stream; returns the unsubscribe function. */
type Subscribe = (listener: (event: CrowEvent) => void) => () => void;

export class PromptRunImpl implements PromptRun {
  readonly result: Promise<PromptResult>;
  private settle!: { resolve: (r: PromptResult) => void; reject: (e: unknown) => void };
  private readonly unsubscribes: Array<() => void> = [];
  private readonly channels: EventChannel<CrowEvent>[] = [];
  private done = false;

  constructor(
    private readonly onCancel: () => void,
    private readonly subscribe: Subscribe,
    onEvent?: (event: CrowEvent) => void,
  ) {
    this.result = new Promise<PromptResult>((resolve, reject) => {
      this.settle = { resolve, reject };
    });
    // Nobody has to await `result` (iterating is enough): never an unhandled rejection.
    this.result.catch(() => {});
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
  }

  /** A run whose turn could not start: `result` rejects with `error`, the iteration is empty. */
  static refused(error: unknown): PromptRunImpl {
    const run = new PromptRunImpl(
      () => {},
      () => () => {},
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

  private end(): void {
    this.done = true;
    for (const unsubscribe of this.unsubscribes.splice(0)) unsubscribe();
    for (const channel of this.channels.splice(0)) channel.close();
  }

  cancel(): void {
    this.onCancel();
  }

  /**
   * The turn's events from now on. The turn's first event comes after `prompt()` returns, so iterating the run at
   * once (`for await (const e of session.prompt(…))`) sees all of them.
   */
  [Symbol.asyncIterator](): AsyncIterator<CrowEvent> {
    const channel = new EventChannel<CrowEvent>(() => this.onCancel());
    if (this.done) channel.close();
    else {
      this.channels.push(channel);
      this.unsubscribes.push(this.subscribe((event) => channel.push(event)));
    }
    return channel[Symbol.asyncIterator]();
  }
}
