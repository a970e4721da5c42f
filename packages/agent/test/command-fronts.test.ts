/**
 * One rule for where a `crow` command's front lives (issue 51 item 4): in the room that does its work, as that room's
 * `command.ts`, or in `commands/` for a command with no room of its own; `entry/command.ts` only dispatches. Read
 * from the dispatcher's own imports, so a command added elsewhere (or a room's front under another name) fails here.
 */
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";

const src = path.resolve(import.meta.dirname, "../src");

/** The modules entry/command.ts loads for the commands (its dynamic imports), as written there. */
function dispatched(): string[] {
  const text = readFileSync(path.join(src, "entry/command.ts"), "utf8");
  return [...text.matchAll(/import\(\s*"([^"]+)"\s*\)/g)].map((m) => m[1] ?? "");
}

/** Whether `specifier` (relative to entry/) is a command front by the rule. */
function isFront(specifier: string): boolean {
  return /^\.\.\/commands\/[a-z-]+(\/index)?\.js$/.test(specifier) || /^\.\.\/[a-z-]+\/command\.js$/.test(specifier);
}

test("every command the dispatcher loads is a room's command.ts or a file of commands/", () => {
  const fronts = dispatched();
  assert.ok(fronts.length >= 8, `found only ${fronts.length} dispatched commands: did the pattern stop matching?`);
  assert.deepEqual(
    fronts.filter((s) => !isFront(s)),
    [],
    "a command's front is its room's command.ts, or a file in commands/",
  );
  for (const s of fronts) assert.ok(existsSync(path.join(src, "entry", s.replace(/\.js$/, ".ts"))), `${s} exists`);
});

test("every room's command.ts is a command the dispatcher loads", () => {
  const fronts = new Set(dispatched());
  const rooms = readdirSync(src, { withFileTypes: true })
    .filter((e) => e.isDirectory() && e.name !== "entry" && existsSync(path.join(src, e.name, "command.ts")))
    .map((e) => `../${e.name}/command.js`);
  assert.ok(rooms.length >= 5);
  assert.deepEqual(
    rooms.filter((r) => !fronts.has(r)),
    [],
  );
});

test("the rule tells a front from a helper of a room", () => {
  assert.ok(isFront("../run/command.js"));
  assert.ok(isFront("../commands/doctor/index.js"));
  assert.ok(!isFront("../run/client.js"));
  assert.ok(!isFront("../acp/run.js"));
});
