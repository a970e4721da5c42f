/**
 * The agent's public API is what src/index.ts names, one by one (issue 51 item 4, as for core): with `export *` of
 * the ACP layer, the translation and the configuration's helpers, every internal function was SDK surface. What the
 * guides and examples import from `@crow/agent` (docs/sdk.md, docs/extensions.md, examples/) must stay public; a few
 * internals are checked not to be.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import * as agent from "../src/index.js";

const repo = path.resolve(import.meta.dirname, "../../..");
const index = readFileSync(path.join(repo, "packages/agent/src/index.ts"), "utf8");

/** The names `text` exports from `export { … } from` lines (`type` markers dropped). */
function exportedNames(text: string): Set<string> {
  return new Set(
    [...text.matchAll(/export (?:type )?\{([^}]*)\} from/g)].flatMap((m) =>
      (m[1] ?? "")
        .split(",")
        .map((n) => n.trim().replace(/^type\s+/, ""))
        .filter(Boolean),
    ),
  );
}

/** The names `text` imports from "@crow/agent" (in code and in the guides' code blocks). */
function importedFromAgent(text: string): string[] {
  return [...text.matchAll(/import (?:type )?\{([^}]*)\} from "@crow\/agent"/g)].flatMap((m) =>
    (m[1] ?? "")
      .split(",")
      .map((n) => n.trim().replace(/^type\s+/, ""))
      .filter(Boolean),
  );
}

/** Every file under `dir` (relative to the repo) whose name ends in one of `extensions`. */
function filesUnder(dir: string, extensions: readonly string[]): string[] {
  return readdirSync(path.join(repo, dir), { recursive: true, encoding: "utf8" })
    .filter((name) => extensions.some((ext) => name.endsWith(ext)))
    .map((name) => path.join(repo, dir, name));
}

test("the public entry names what it exports: no export *", () => {
  assert.doesNotMatch(index, /export (type )?\*/);
});

test("every name the examples and the guides import from @crow/agent is exported", () => {
  const sources = [
    ...filesUnder("examples", [".ts", ".mts", ".mjs", ".js"]),
    path.join(repo, "docs/sdk.md"),
    path.join(repo, "docs/extensions.md"),
  ];
  const imported = new Set(sources.flatMap((file) => importedFromAgent(readFileSync(file, "utf8"))));
  assert.ok(imported.has("createCrow") && imported.has("ExtensionAPI"), "the pattern found the examples' imports");
  const exported = exportedNames(index);
  assert.deepEqual(
    [...imported].filter((name) => !exported.has(name)),
    [],
  );
});

test("what docs/sdk.md names for SDK hosts is public", () => {
  // Values, checked on the module itself.
  const values = [
    "createCrow",
    "loadConfig",
    "toolRouterFactory",
    "ConfigError",
    "MethodError",
    "PermissionRuleError",
    "RunIterationError",
    "SessionBusyError",
    "MAX_SUBAGENT_DEPTH",
  ];
  const module = agent as Record<string, unknown>;
  assert.deepEqual(
    values.filter((name) => module[name] === undefined),
    [],
  );
  // Types, which exist only in the source: its export lines.
  const types = [
    "AgentConfig",
    "CrowOptions",
    "Crow",
    "CrowSession",
    "CrowEvent",
    "PromptRun",
    "RuntimeOptions",
    "ToolSet",
    "ToolSetFactory",
    "ResolvedTool",
    "LlmClient",
    "Store",
    "SubagentResponse",
    "ExtensionAPI",
  ];
  const exported = exportedNames(index);
  assert.deepEqual(
    types.filter((name) => !exported.has(name)),
    [],
  );
});

test("the agent's internals are not public", () => {
  const internals = [
    "createAgent",
    "runAcp",
    "textChunk",
    "toolCallStarted",
    "promptContent",
    "configOptions",
    "parseDotenv",
    "adoptSingleModel",
    "createModelRouter",
    "agentLogger",
    "runtimeOptionsFor",
    "createToolRouter",
  ];
  const module = agent as Record<string, unknown>;
  assert.deepEqual(
    internals.filter((name) => module[name] !== undefined),
    [],
  );
});
