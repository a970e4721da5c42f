/**
 * Facts the docs state about the repository itself, kept true: the README's quick start holds the command running
 * Crow's main job and the command passing all tests, and CI (`.ci/run`) runs that same test command; the benchmark
 * list of docs/development.md names every benchmark under bench/ (issue 52: it had missed four).
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";

const repoRoot = path.resolve(import.meta.dirname, "../../..");
const read = (file: string) => readFileSync(path.join(repoRoot, file), "utf8");

/** The lines of the fenced code blocks under the README's "Quick start" heading. */
function quickStartCode(readme: string): string[] {
  const start = readme.indexOf("\n## Quick start\n");
  assert.ok(start >= 0, "the README has a Quick start section");
  const end = readme.indexOf("\n## ", start + 1);
  const section = readme.slice(start, end < 0 ? undefined : end);
  return [...section.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].flatMap((m) => (m[1] as string).split("\n"));
}

test("the README's quick start runs Crow's main job and every test, and CI runs that test command", () => {
  const code = quickStartCode(read("README.md"));
  assert.ok(
    code.some((line) => /^(?:\S+=\S+ )*crow run "[^"]+"/.test(line)),
    `a crow run line in the quick start:\n${code.join("\n")}`,
  );
  assert.ok(
    code.includes("npm ci && npm test"),
    `the line "npm ci && npm test" in the quick start:\n${code.join("\n")}`,
  );
  const ci = read(".ci/run");
  assert.match(ci, /^npm ci\b/m, ".ci/run installs with npm ci");
  assert.match(ci, /^suite "[^"]*" npm test$/m, ".ci/run runs npm test");
});

test("docs/development.md's benchmark list names every bench/*.bench.ts and nothing else", () => {
  const benches = readdirSync(path.join(repoRoot, "bench"))
    .filter((f) => f.endsWith(".bench.ts"))
    .map((f) => f.replace(/\.bench\.ts$/, ""))
    .sort();
  assert.ok(benches.length >= 10, `only ${benches.length} benchmarks found`);
  const line = /^- `npm run bench -- <name>` — ([^:]*):/m.exec(read("docs/development.md"));
  assert.ok(line, "docs/development.md has the `npm run bench -- <name>` item");
  const listed = [...(line[1] as string).matchAll(/`([\w-]+)`/g)].map((m) => m[1] as string).sort();
  assert.deepEqual(listed, benches);
});
