/**
 * Per-file serialization of edits. Models send several edits of one file in parallel; each reads the file, applies
 * its change and writes the whole text back, so without a queue the second write would carry stale content and the
 * first change would be lost.
 */

/** Runs `task` once every earlier task on the same file (of the same queue) has finished. */
export type FileLock = <T>(file: string, task: () => Promise<T>) => Promise<T>;

/**
 * A new, independent set of per-file queues. Each user of the edit engine (crow-mcp on disk, the agent on the
 * editor's buffers) keeps its own, so one holding a file while it hands the call to the other cannot wait on itself.
 */
export function fileLocks(): FileLock {
  const locks = new Map<string, Promise<void>>();
  return async <T>(file: string, task: () => Promise<T>): Promise<T> => {
    const previous = locks.get(file) ?? Promise.resolve();
    let release: () => void = () => undefined;
    const current = new Promise<void>((resolve) => {
      release = resolve;
    });
    const tail = previous.then(() => current);
    locks.set(file, tail);
    await previous;
    try {
      return await task();
    } finally {
      release();
      if (locks.get(file) === tail) locks.delete(file);
    }
  };
}
