/**
 * docs/architecture.md names the files a prompt crosses; a rename or a move that forgets the doc must fail here, so
 * the doc cannot silently describe code that is no longer there.
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";

const repoRoot = path.resolve(import.meta.dirname, "../../..");

/** Every `packages/...` path the text names, without trailing punctuation. */
export function namedPackagePaths(text: string): string[] {
  const found = text.match(/packages\/[A-Za-z0-9_./-]+/g) ?? [];
  return [...new Set(found.map((p) => p.replace(/[.,)/]+$/, "")))];
}

test("every packages/... path docs/architecture.md names exists", () => {
  const doc = readFileSync(path.join(repoRoot, "docs/architecture.md"), "utf8");
  const named = namedPackagePaths(doc);
  assert.ok(named.length > 40, `the doc names only ${named.length} paths: did the pattern stop matching?`);
  const missing = named.filter((p) => !existsSync(path.join(repoRoot, p)));
  assert.deepEqual(missing, [], `docs/architecture.md names paths that do not exist: ${missing.join(", ")}`);
});

test("a path that does not exist is reported", () => {
  const named = namedPackagePaths("see `packages/agent/src/acp/no-such-file.ts`, then packages/core/src/loop/loop.ts.");
  assert.deepEqual(named, ["packages/agent/src/acp/no-such-file.ts", "packages/core/src/loop/loop.ts"]);
  assert.deepEqual(
    named.filter((p) => !existsSync(path.join(repoRoot, p))),
    ["packages/agent/src/acp/no-such-file.ts"],
  );
});
