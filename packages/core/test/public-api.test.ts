/**
 * Core's public API is what index.ts names, one by one; what the agent needs beyond it is `@crow/core/internal`
 * (issue 51 item 4: with `export *` of ~20 modules, every internal helper was SDK surface). The names the guides
 * promise (docs/sdk.md, docs/extensions.md, docs/skills.md) must stay public; a few internals are checked not to be.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import * as core from "@crow/core";
import * as internal from "@crow/core/internal";

const src = path.resolve(import.meta.dirname, "../src");

/** The names an entry file exports, from its `export { … } from` lines. */
function exportedNames(file: string): string[] {
  const text = readFileSync(path.join(src, file), "utf8");
  return [...text.matchAll(/export (?:type )?\{([^}]*)\} from/g)].flatMap((m) =>
    (m[1] ?? "")
      .split(",")
      .map((n) => n.trim().replace(/^type\s+/, ""))
      .filter(Boolean),
  );
}

test("the public entry names what it exports: no export *", () => {
  for (const file of ["index.ts", "internal.ts"]) {
    const text = readFileSync(path.join(src, file), "utf8");
    assert.doesNotMatch(text, /export (type )?\*/, `${file} re-exports a whole module`);
  }
});

test("no name is in both entries", () => {
  const pub = new Set(exportedNames("index.ts"));
  assert.ok(pub.size > 100, `only ${pub.size} public names: did the pattern stop matching?`);
  assert.deepEqual(
    exportedNames("internal.ts").filter((n) => pub.has(n)),
    [],
  );
});

test("what the guides promise from @crow/core is public", () => {
  const promised = [
    // docs/sdk.md
    "createRuntime",
    "createLlmClient",
    "openStore",
    "toolSetOf",
    "runToolCall",
    "callDisplay",
    "MethodError",
    "PermissionRuleError",
    "RunIterationError",
    "SessionBusyError",
    "MAX_SUBAGENT_DEPTH",
    "SUBAGENT_METHOD",
    // docs/extensions.md and docs/skills.md
    "trustProject",
    "isProjectTrusted",
    "checkSkillSpec",
    "loadSkills",
    "skillRoots",
    "createSkillIndex",
    "openAiEmbedder",
    "matchTriggers",
    "triggerInjection",
    "skillsHint",
    "skillTools",
  ];
  const exported = core as Record<string, unknown>;
  assert.deepEqual(
    promised.filter((name) => exported[name] === undefined),
    [],
  );
});

test("internal helpers are not public, and the agent finds them in @crow/core/internal", () => {
  const internals = [
    "putBeneath",
    "compilePermissionRules",
    "HookBus",
    "runLoop",
    "resolveSessionId",
    "watchPromptSize",
  ];
  const pub = core as Record<string, unknown>;
  const inner = internal as Record<string, unknown>;
  assert.deepEqual(
    internals.filter((name) => pub[name] !== undefined),
    [],
  );
  assert.deepEqual(
    internals.filter((name) => inner[name] === undefined),
    [],
  );
});
