/**
 * Issue 49: old tool results are sent shortened, in batches, so the prefix a provider cached changes once per batch
 * rather than with every request, and the same history always gives the same messages.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { ChatMessage } from "@crow/core";
import { BATCH_CHARS, shortenOldToolResults } from "@crow/core/internal";

/** A history of `n` rounds: a read call and its result of `size` characters (numbered so each is distinct). */
function rounds(n: number, size: number): ChatMessage[] {
  const history: ChatMessage[] = [
    { role: "system", content: "system" },
    { role: "user", content: "go" },
  ];
  for (let i = 0; i < n; i++) {
    const id = `call_${i}`;
    history.push({
      role: "assistant",
      content: null,
      tool_calls: [{ id, type: "function", function: { name: "read", arguments: `{"file_path":"/f${i}"}` } }],
    });
    history.push({ role: "tool", tool_call_id: id, content: `result ${i} `.padEnd(size, "x") });
  }
  return history;
}

const toolTexts = (messages: readonly ChatMessage[]) =>
  messages.filter((m) => m.role === "tool").map((m) => String(m.content));

describe("old tool results", () => {
  test("are sent whole until shortening them would save a batch", () => {
    const history = rounds(14, 5_000);
    // 4 old results of 5 000 characters save less than a batch.
    assert.equal(shortenOldToolResults(history, 10), history);
  });

  test("past a batch, the older ones keep their head and tail and say how to get the rest; the recent ones stay whole", () => {
    const history = rounds(30, 5_000);
    const sent = toolTexts(shortenOldToolResults(history, 10));
    const whole = toolTexts(history);
    assert.deepEqual(sent.slice(-10), whole.slice(-10));
    const first = sent[0] ?? "";
    assert.ok(first.length < 1_400, `${first.length} characters`);
    assert.ok(first.startsWith("result 0 "));
    assert.match(first, /\[… 3800 characters of this earlier result left out to save context; call the tool again/);
    assert.ok(first.endsWith("x".repeat(400)));
    // Short results are never shortened; the stored history is untouched.
    assert.equal(toolTexts(shortenOldToolResults(rounds(30, 1_500), 10)).join(), toolTexts(rounds(30, 1_500)).join());
    assert.equal(toolTexts(history)[0]?.length, 5_000);
  });

  test("what was shortened stays shortened as the session grows, and changes only at a batch's end", () => {
    const perResult = 5_000 - 1_200 - 100; // about what shortening one saves
    const perBatch = Math.ceil(BATCH_CHARS / perResult);
    let previous: string[] = [];
    let changes = 0;
    for (let n = 11; n <= 60; n++) {
      const sent = toolTexts(shortenOldToolResults(rounds(n, 5_000), 10));
      // Every message sent before is sent again unchanged (a grown prefix), or the batch moved.
      const same = previous.every((text, i) => sent[i] === text);
      if (!same) changes++;
      previous = sent;
    }
    // 50 more results old: one change per batch of results, not one per request.
    assert.ok(changes <= Math.ceil(50 / perBatch), `${changes} changes, batches of ${perBatch}`);
    assert.ok(changes >= 2, `${changes} changes`);
    // The same history gives the same messages.
    assert.deepEqual(shortenOldToolResults(rounds(60, 5_000), 10), shortenOldToolResults(rounds(60, 5_000), 10));
  });

  test("keep: Infinity sends every result whole", () => {
    const history = rounds(60, 5_000);
    assert.equal(shortenOldToolResults(history, Number.POSITIVE_INFINITY), history);
  });
});
