// Upstream's keys that Crow does not take as written: every accepted key does something, or is refused by name with
// what to write instead (N_STEPS_BACK_COMPACT; a tool-name key that would rename a tool), and MAX_TOKENS / a model's
// max_tokens become the model's request limit. CROW_MAX_COMPACT_TOKENS is read by the loader like the other variables.
import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, describe, test } from "node:test";
import { ConfigError, compactionThresholdOf, loadConfig } from "../src/config/index.js";

const roots: string[] = [];
after(() => Promise.all(roots.map((dir) => rm(dir, { recursive: true, force: true }))));

/** A fresh HOME whose config.yaml has one provider and model `m`, then `lines`; `dotenv` as its .env. */
async function home(lines: string[], dotenv?: string): Promise<NodeJS.ProcessEnv> {
  const dir = await mkdtemp(path.join(tmpdir(), "crow-upstream-keys-"));
  roots.push(dir);
  await mkdir(path.join(dir, ".crow"));
  const yaml = ["providers:", "  p: { base_url: 'http://127.0.0.1:1/v1' }", "models:", "  m: { provider: p }"];
  await writeFile(path.join(dir, ".crow", "config.yaml"), [...yaml, ...lines].join("\n"));
  if (dotenv !== undefined) await writeFile(path.join(dir, ".crow", ".env"), dotenv);
  return { HOME: dir };
}

/** The message of the ConfigError loading `env` throws. */
function refusal(env: NodeJS.ProcessEnv): string {
  try {
    loadConfig(env);
  } catch (error) {
    assert.ok(error instanceof ConfigError, `expected a ConfigError, got ${String(error)}`);
    return error.message;
  }
  assert.fail("expected a ConfigError");
}

describe("config: upstream's keys", () => {
  test("N_STEPS_BACK_COMPACT is refused by name, saying what replaced it; the file's other problems come too", async () => {
    const message = refusal(await home(["N_STEPS_BACK_COMPACT: 8", "max_steps_per_turn: none"]));
    assert.match(message, /^~\/\.crow\/config\.yaml: /);
    assert.match(message, /N_STEPS_BACK_COMPACT: no longer accepted .*compaction keeps .*remove the key/);
    assert.match(message, /max_steps_per_turn: /, "the other problem is reported in the same error");
    // Left empty it is absent, as every key is.
    assert.equal(loadConfig(await home(["N_STEPS_BACK_COMPACT:"])).model, "m");
  });

  test("a tool-name key naming crow-mcp's own tool is accepted in upstream's spellings; renaming one is refused", async () => {
    // Upstream's shipped default (prefixed) and what its init writes: the tools Crow already routes by these names.
    const upstream = ["TERMINAL_TOOL: crow-mcp_terminal", "WRITE_TOOL: write", "SEARCH_TOOL: crow-mcp_web_search"];
    assert.equal(loadConfig(await home([...upstream, "FETCH_TOOL: web_fetch"])).model, "m");
    const message = refusal(await home([...upstream, "TERMINAL_TOOL_: x", "FETCH_TOOL: curl", "READ_TOOL: cat"]));
    assert.match(message, /FETCH_TOOL: "curl" is not crow-mcp's web_fetch tool, and Crow does not rename tools/);
    assert.match(message, /READ_TOOL: "cat" is not crow-mcp's read tool.*remove the key, or write "read"/);
    assert.match(message, /TERMINAL_TOOL_: unknown key \(did you mean "TERMINAL_TOOL"\?\)/);
    assert.doesNotMatch(message, /TERMINAL_TOOL:|WRITE_TOOL|SEARCH_TOOL/, "the right spellings are not blamed");
  });

  test("MAX_TOKENS is every model's max_tokens; a model's own max_tokens wins; neither: none", async () => {
    const both = loadConfig(await home(["  big: { provider: p, max_tokens: 456 }", "MAX_TOKENS: 123"]));
    assert.deepEqual(
      both.models.map((m) => [m.name, m.maxTokens]),
      [
        ["m", 123],
        ["big", 456],
      ],
    );
    const none = loadConfig(await home([]));
    assert.equal(none.models[0]?.maxTokens, undefined, "no max_tokens is sent unless configured");
  });

  test("CROW_MAX_COMPACT_TOKENS is read by the loader (environment or .env); config.yaml's MAX_COMPACT_TOKENS wins", async () => {
    const fromEnv = loadConfig({ ...(await home([])), CROW_MAX_COMPACT_TOKENS: "5000" });
    assert.equal(compactionThresholdOf(fromEnv, "m"), 5000);
    const fromDotenv = loadConfig(await home([], "CROW_MAX_COMPACT_TOKENS=6000\n"));
    assert.equal(compactionThresholdOf(fromDotenv, "m"), 6000);
    const fromFile = loadConfig({ ...(await home(["MAX_COMPACT_TOKENS: 7000"])), CROW_MAX_COMPACT_TOKENS: "5000" });
    assert.equal(compactionThresholdOf(fromFile, "m"), 7000);
    const bad = refusal({ ...(await home([])), CROW_MAX_COMPACT_TOKENS: "lots" });
    assert.match(bad, /CROW_MAX_COMPACT_TOKENS="lots" is not valid: expected a whole number ≥ 1/);
  });
});
