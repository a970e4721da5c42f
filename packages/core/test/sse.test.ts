import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { readSseData } from "../src/llm/sse.js";

/** Reads `chunks` (each a Buffer as it might arrive from the network) as one stream. */
async function events(chunks: Buffer[]): Promise<string[]> {
  async function* body() {
    for (const chunk of chunks) yield chunk;
  }
  const out: string[] = [];
  for await (const event of readSseData(body())) out.push(event);
  return out;
}

/** Splits `text`'s UTF-8 bytes every `size` bytes (cutting multi-byte characters). */
function cut(text: string, size: number): Buffer[] {
  const bytes = Buffer.from(text);
  const chunks: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size));
  return chunks;
}

describe("readSseData", () => {
  const stream = '\ufeff: keep-alive\r\ndata: {"a":"héllo 🦜"}\r\n\r\nevent: x\ndata: one\ndata: two\n\ndata: [DONE]';

  test("events whole, however the bytes are cut: BOM, comments, CRLF, multi-line data, no final blank line", async () => {
    const expected = ['{"a":"héllo 🦜"}', "one\ntwo", "[DONE]"];
    assert.deepEqual(await events([Buffer.from(stream)]), expected);
    for (const size of [1, 2, 3, 5, 7])
      assert.deepEqual(await events(cut(stream, size)), expected, `cut every ${size}`);
  });

  test("an empty or comment-only stream has no events", async () => {
    assert.deepEqual(await events([]), []);
    assert.deepEqual(await events([Buffer.from(": ping\n\n: ping\n\n")]), []);
  });
});
