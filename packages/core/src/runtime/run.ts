/**
 * A running prompt turn as the SDK hands it out: an async iterable of the turn's events (buffered, so iterating is
 * optional and may start late) and a `result` promise. Breaking out of the iteration cancels the turn.
 */
import { EventChannel } from "../loop/channel.js";
import type { CrowEvent, PromptResult, PromptRun } from "./types.js";

export class PromptRunImpl implements PromptRun {
  readonly result: Promise<PromptResult>;
  private readonly channel: EventChannel<CrowEvent>;
  private settle!: { resolve: (r: PromptResult) => void; reject: (e: unknown) => void };

  constructor(
    private readonly onCancel: () => void,
    private readonly onEvent?: (event: CrowEvent) => void,
  ) {
    this.channel = new EventChannel<CrowEvent>(onCancel);
    this.result = new Promise<PromptResult>((resolve, reject) => {
      this.settle = { resolve, reject };
    });
    // Nobody has to await `result` (iterating is enough): never an unhandled rejection.
    this.result.catch(() => {});
  }

  push(event: CrowEvent): void {
    try {
      this.onEvent?.(event);
    } catch {
      // A listener's failure must not break the turn.
    }
    this.channel.push(event);
  }

  finish(result: PromptResult): void {
    this.channel.close();
    this.settle.resolve(result);
  }

  fail(error: unknown): void {
    this.channel.close();
    this.settle.reject(error);
  }

  cancel(): void {
    this.onCancel();
  }

  [Symbol.asyncIterator](): AsyncIterator<CrowEvent> {
    return this.channel[Symbol.asyncIterator]();
  }
}
