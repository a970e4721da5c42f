/**
 * A push-based async iterable: the producer pushes without waiting, the consumer pulls with `for await`.
 * Ending the iteration early (break/return) calls `onReturn` (the loop uses it to cancel the turn).
 * It holds only what was pushed and not yet read: a value is let go once read, everything queued once the
 * iteration ends early.
 */
export class EventChannel<T> implements AsyncIterable<T> {
  // A read slot is set to undefined at once, so a long backlog does not keep what was already handed out.
  private readonly queue: Array<T | undefined> = [];
  private head = 0;
  private waiting: ((result: IteratorResult<T>) => void) | undefined;
  private closed = false;

  constructor(private readonly onReturn: () => void = () => {}) {}

  push(value: T): void {
    if (this.closed) return;
    const waiting = this.waiting;
    if (waiting) {
      this.waiting = undefined;
      waiting({ value, done: false });
    } else {
      this.queue.push(value);
    }
  }

  close(): void {
    this.closed = true;
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return {
      next: () => {
        if (this.head < this.queue.length) {
          const value = this.queue[this.head] as T;
          this.queue[this.head++] = undefined;
          if (this.head === this.queue.length) {
            this.queue.length = 0;
            this.head = 0;
          } else if (this.head > 1024 && this.head * 2 > this.queue.length) {
            this.queue.splice(0, this.head);
            this.head = 0;
          }
          return Promise.resolve({ value, done: false });
        }
        if (this.closed) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => {
          this.waiting = resolve;
        });
      },
      return: () => {
        this.closed = true;
        this.queue.length = 0;
        this.head = 0;
        this.onReturn();
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }
}

/** Marker returned by `raceAbort` when the signal fired first. */
export const ABORTED: unique symbol = Symbol("aborted");

/** Resolves with the promise's value, or `ABORTED` as soon as `signal` aborts (the promise keeps running). */
export function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T | typeof ABORTED> {
  if (signal.aborted) return Promise.resolve(ABORTED);
  return new Promise((resolve, reject) => {
    const onAbort = () => resolve(ABORTED);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}
