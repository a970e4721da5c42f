/**
 * The leaf helpers core, crow-mcp and the agent share (issue 51 item 4: one definition where each side had its copy).
 * The deadline's behaviour under a dripping server is tested through its users (web-deadline, embedder-deadline).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { createLog, escapeRegExp, splitLines, startDeadline } from "@crow/util";

test("a log writes the levels its variable lets through, named, with an error's stack", () => {
  const lines: string[] = [];
  let level: string | undefined;
  const log = createLog({ name: "crow-x", level: () => level, write: (line) => lines.push(line) });
  log.info("hidden at the default level");
  log.warn("shown", { a: 1 });
  level = "debug";
  log.debug("now shown", new Error("boom"));
  level = "nonsense";
  log.info("the default again: hidden");
  assert.equal(lines.length, 2);
  assert.equal(lines[0], '[crow-x] warn: shown {"a":1}\n');
  assert.match(lines[1] ?? "", /^\[crow-x\] debug: now shown Error: boom\n {4}at /);
});

test("splitLines: a final newline ends the last line; empty text has none", () => {
  assert.deepEqual(splitLines(""), []);
  assert.deepEqual(splitLines("a"), ["a"]);
  assert.deepEqual(splitLines("a\n"), ["a"]);
  assert.deepEqual(splitLines("a\n\n"), ["a", ""]);
  assert.deepEqual(splitLines("\n"), [""]);
});

test("escapeRegExp matches its text literally", () => {
  const text = "a.b*c+(d)?[e]{f}|g^h$i\\j";
  assert.ok(new RegExp(`^${escapeRegExp(text)}$`).test(text));
  assert.ok(!new RegExp(escapeRegExp("a.b")).test("axb"));
});

test("a deadline says whether the time ran out or the caller cancelled", async () => {
  const caller = new AbortController();
  const cancelled = startDeadline(10_000, caller.signal);
  caller.abort(new Error("stop"));
  assert.ok(cancelled.signal.aborted);
  assert.equal(cancelled.timedOut(), false);
  cancelled.clear();
  const late = startDeadline(1);
  await new Promise((resolve) => late.signal.addEventListener("abort", resolve, { once: true }));
  assert.equal(late.timedOut(), true);
  assert.equal((late.signal.reason as DOMException).name, "TimeoutError");
  late.clear();
});
