/**
 * The agent's side of stdout as a WritableStream that sends what the ACP connection writes during one turn of the
 * event loop in a single write. The SDK writes every message on its own, and stdout to a pipe is synchronous on
 * Linux, so a tool round's five or six updates were five or six write(2) calls; now they are one. Order is kept,
 * nothing waits longer than the current tick, and while the destination is full (a slow reader) writers wait for
 * it to drain before the next batch.
 */
import type { Writable } from "node:stream";

export function batchedOutput(destination: Writable): WritableStream<Uint8Array> {
  let pending: Uint8Array[] = [];
  let scheduled = false;
  let drained: Promise<void> | undefined;
  let failure: Error | undefined;
  destination.on("error", (error: Error) => {
    failure ??= error;
  });

  const flush = () => {
    scheduled = false;
    if (pending.length === 0 || failure) return;
    const chunks = pending;
    pending = [];
    const ok = destination.write(chunks.length === 1 ? (chunks[0] as Uint8Array) : Buffer.concat(chunks));
    if (!ok && !drained) {
      drained = new Promise((resolve) => {
        const done = () => {
          destination.off("drain", done);
          destination.off("close", done);
          drained = undefined;
          resolve();
        };
        destination.on("drain", done);
        destination.on("close", done);
      });
    }
  };

  return new WritableStream<Uint8Array>({
    async write(chunk) {
      if (failure) throw failure;
      pending.push(chunk);
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
      if (drained) await drained;
    },
    async close() {
      flush();
      if (drained) await drained;
    },
    abort() {
      pending = [];
    },
  });
}
