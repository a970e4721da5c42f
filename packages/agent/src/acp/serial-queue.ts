/** A queue of async tasks run one at a time (a session's steers keep their arrival order through it). */

/** Runs tasks one after another, in the order they were handed in (a failed task does not stop the next). */
export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(task: () => Promise<T>): Promise<T> {
    const result = this.tail.then(task);
    this.tail = result.catch(() => undefined);
    return result;
  }
}
