import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, describe, test } from "node:test";
import { ConfigError, loadConfig } from "../src/config/index.js";

const roots: string[] = [];
after(() => Promise.all(roots.map((dir) => rm(dir, { recursive: true, force: true }))));

/** Loads a config.yaml with one provider and the given `models:` lines, from a fresh temp HOME. */
async function load(models: string[]) {
  const home = await mkdtemp(path.join(tmpdir(), "crow-reasoning-"));
  roots.push(home);
  await mkdir(path.join(home, ".crow"));
  const yaml = ["providers:", "  p: { base_url: 'http://127.0.0.1:1/v1' }", "models:", ...models].join("\n");
  await writeFile(path.join(home, ".crow", "config.yaml"), yaml);
  return loadConfig({ HOME: home });
}

describe("config: a model's reasoning_effort levels", () => {
  test("a list is kept (duplicates dropped), true means low/medium/high, absent or false means none", async () => {
    const config = await load([
      "  a: { provider: p, reasoning_effort: [minimal, low, low, high] }",
      "  b: { provider: p, reasoning_effort: true }",
      "  c: { provider: p }",
      "  d: { provider: p, reasoning_effort: false }",
    ]);
    assert.deepEqual(
      config.models.map((m) => [m.name, m.reasoningEfforts]),
      [
        ["a", ["minimal", "low", "high"]],
        ["b", ["low", "medium", "high"]],
        ["c", undefined],
        ["d", undefined],
      ],
    );
  });

  test("a single word or an empty list is refused, naming the key", async () => {
    const cases = [
      ["high", "expected the levels the model accepts, e.g. [low, medium, high], or true for those three"],
      ["[]", "expected at least 1, got a list"],
    ];
    for (const [value, message] of cases) {
      await assert.rejects(load([`  a: { provider: p, reasoning_effort: ${value} }`]), (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.ok(error.message.endsWith(`models.a.reasoning_effort: ${message}`), error.message);
        return true;
      });
    }
  });
});
