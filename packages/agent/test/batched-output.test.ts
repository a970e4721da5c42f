import assert from "node:assert/strict";
import { PassThrough, Writable } from "node:stream";
import { describe, test } from "node:test";
import { batchedOutput } from "../src/acp/batched-output.js";

const bytes = (text: string) => new TextEncoder().encode(text);

/** A destination that records each write(2)-level chunk it is given. */
function recorder(highWaterMark = 16 * 1024) {
  const writes: string[] = [];
  const stream = new Writable({
    highWaterMark,
    write(chunk: Buffer, _encoding, done) {
      writes.push(chunk.toString("utf8"));
      done();
    },
  });
  return { stream, writes };
}

describe("ACP output batching", () => {
  test("messages written in one tick reach the destination as one write, in order", async () => {
    const { stream, writes } = recorder();
    const writer = batchedOutput(stream).getWriter();
    await Promise.all(["a\n", "b\n", "c\n"].map((m) => writer.write(bytes(m))));
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(writes, ["a\nb\nc\n"]);
    await writer.write(bytes("d\n"));
    await writer.close();
    assert.deepEqual(writes, ["a\nb\nc\n", "d\n"]);
  });

  test("a slow destination holds writers back until it drains, and nothing is lost or reordered", async () => {
    const slow = new PassThrough({ highWaterMark: 4 });
    const writer = batchedOutput(slow).getWriter();
    let received = "";
    const messages = Array.from({ length: 50 }, (_, i) => `message ${i}\n`);
    // One message per tick (writes within one tick are one batch by design).
    const writes = (async () => {
      for (const m of messages) {
        await writer.write(bytes(m));
        await new Promise((resolve) => setImmediate(resolve));
      }
      await writer.close();
    })();
    // Nobody reads yet: the writer must be waiting for drain rather than buffering everything in the stream.
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.ok(slow.writableLength + slow.readableLength < messages.join("").length / 4);
    for await (const chunk of slow) {
      received += String(chunk);
      if (received === messages.join("")) break;
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    await writes;
    assert.equal(received, messages.join(""));
  });

  test("a destination that failed makes the next write fail instead of dropping it silently", async () => {
    const broken = new Writable({
      write(_chunk, _encoding, done) {
        done(new Error("EPIPE"));
      },
    });
    const writer = batchedOutput(broken).getWriter();
    const failed = new Promise((resolve) => broken.once("error", resolve));
    await writer.write(bytes("first\n"));
    // The first write is flushed on a later tick; wait for the destination to report its failure, however long
    // that takes on a loaded machine (a fixed 10 ms sleep flaked).
    await failed;
    await assert.rejects(writer.write(bytes("second\n")), /EPIPE/);
  });
});
