// The edit engine's work budget and its pausing search (issue #25, point 1): a fuzzy search that would take too long
// gives up with a message the model can act on, the "did you mean" search obeys the same budget, and the async entry
// points give the thread back during a long search while answering exactly as the synchronous ones do.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { EditError, editText, editTextAsync, replace, replaceAsync, WorkBudget } from "../src/edit/index.js";
import { CASCADE_CASES } from "./edit-cases.js";

/** A file of `lines` closing braces, and an old_string of 99 of them and a line the file does not have. */
function repetitive(lines: number): { content: string; old: string } {
  return { content: "}\n".repeat(lines), old: `${"}\n".repeat(99)}x` };
}

function refusal(run: () => unknown): EditError {
  try {
    run();
  } catch (error) {
    if (error instanceof EditError) return error;
    throw error;
  }
  assert.fail("the edit was not refused");
}

describe("the fuzzy search's work budget", () => {
  test("a search past its budget gives up, naming the matcher and what to do instead", () => {
    const { content, old } = repetitive(20_000);
    const error = refusal(() => replace(content, old, "y", false, { budget: new WorkBudget(1_000_000) }));
    assert.equal(error.kind, "gave-up");
    assert.match(
      error.message,
      /the fuzzy search gave up \(in the line-trimmed matcher, after about 1 million steps\)/,
    );
    assert.match(error.message, /Give a shorter old_string copied exactly from the file/);
  });

  test("a 100-line old_string against 500 000 short lines is answered within the default budget", () => {
    const content = "}\n".repeat(500_000);
    // Block anchors everywhere (the issue's case): ruled out by the middle texts' lengths, nothing is similar.
    const code = Array.from({ length: 98 }, (_, i) => `  total += item${i}.price;`);
    const anchored = refusal(() => replace(content, ["}", ...code, "}"].join("\n"), "y"));
    assert.equal(anchored.kind, "not-found");
    assert.match(anchored.message, /No similar lines were found/);
    // Every window equal but for its last line: each has to be compared in full, which the budget cuts short.
    const windows = editText("/f.txt", content, false, {
      oldString: repetitive(0).old,
      newString: "y",
      replaceAll: false,
    });
    assert.equal(windows.ok, false);
    assert.match(
      windows.ok ? "" : windows.error,
      /^Error: old_string did not match exactly, and the fuzzy search gave up \(in the line-trimmed matcher/,
    );
  });

  test("the closest-lines search obeys the budget: the not-found error then says to re-read instead", () => {
    // Two lines (too few for the anchor matchers) against long distinct lines: the matchers are cheap, comparing
    // every line for "did you mean" is not.
    const line = (i: number) => `${String(i).padStart(6, "0")} ${"abcdefghij".repeat(19)}`;
    const content = Array.from({ length: 3000 }, (_, i) => line(i)).join("\n");
    const old = "zzzzzz not in the file\nnor this";
    const small = refusal(() => replace(content, old, "y", false, { budget: new WorkBudget(200_000) }));
    assert.equal(small.kind, "not-found");
    assert.match(small.message, /The search for similar lines gave up/);
    assert.doesNotMatch(small.message, /Did you mean/);
    const ample = refusal(() => replace(content, line(7).replace("abcdefghij", "zyxwvutsrq"), "y"));
    assert.match(ample.message, /Did you mean line 8/);
  });

  test("an ordinary fuzzy edit of a large file stays well within the budget", () => {
    const blocks = Array.from({ length: 12_500 }, (_, i) =>
      [`function fn${i}(items) {`, `  let total${i} = 0;`, `  return total${i} * ${i % 7};`, "}", ""].join("\n"),
    );
    const content = blocks.join("\n");
    const budget = new WorkBudget();
    const outcome = replace(
      content,
      "function fn6000(items) {\n  let total6000 = 1;\n  return total6000 * 1;\n}",
      "x",
      false,
      {
        budget,
      },
    );
    assert.equal(outcome.matcher, "block-anchor");
    assert.ok(budget.spent < budget.limit / 10, `spent ${budget.spent} of ${budget.limit}`);
  });
});

describe("the pausing search", () => {
  test("gives the event loop turns throughout a long search, not only before or after it", async () => {
    const { content, old } = repetitive(200_000);
    const budget = new WorkBudget();
    /** The search's work done so far, each time a timer got a turn. */
    const seen: number[] = [];
    const ticker = setInterval(() => seen.push(budget.spent), 0);
    try {
      const error = await replaceAsync(content, old, "y", false, { budget }).then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(error instanceof EditError && error.kind === "gave-up", String(error));
    } finally {
      clearInterval(ticker);
    }
    // Timers ran while the search was under way (some work done, not all of it), at several points, and still in
    // its second half: it pauses all along, not once at the start.
    const during = [...new Set(seen.filter((spent) => spent > 0 && spent < budget.spent))];
    assert.ok(during.length >= 2, `timers ran at ${during.length} points inside the search`);
    assert.ok(Math.max(...during) >= budget.spent / 2, `last turn at ${Math.max(...during)} of ${budget.spent} units`);
  });

  test("answers exactly as the synchronous search does", async () => {
    for (const c of CASCADE_CASES) {
      assert.deepEqual(await replaceAsync(c.content, c.old, c.new), replace(c.content, c.old, c.new), c.matcher);
      const request = { oldString: c.old, newString: c.new, replaceAll: false };
      assert.deepEqual(await editTextAsync("/f", c.content, false, request), editText("/f", c.content, false, request));
    }
  });
});
