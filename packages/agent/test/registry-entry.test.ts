/**
 * Crow's entry for the ACP agent registry (packaging/acp-registry/crow/: agent.json + icon.svg, the layout of the
 * registry repository), validated against the registry's own JSON schema (copied in, source named in its $comment),
 * and kept in step with the published package: same version, launched as `npx crow-agent@<version> acp`.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { test } from "node:test";
import { REPO_ROOT } from "@crow/testkit";
import type { Ajv as AjvClass } from "ajv";

const dir = path.join(REPO_ROOT, "packaging", "acp-registry");
const readJson = (file: string): unknown => JSON.parse(readFileSync(file, "utf8"));

interface Entry {
  id: string;
  version: string;
  distribution: { npx?: { package: string; args?: string[] } };
}

test("agent.json validates against the ACP registry's schema", () => {
  // ajv (with ajv-formats, for the `uri` format) is what the MCP SDK validates with; both are CommonJS.
  const require = createRequire(import.meta.url);
  const Ajv = require("ajv") as typeof AjvClass;
  const addFormats = require("ajv-formats") as (ajv: AjvClass) => AjvClass;
  const ajv = addFormats(new Ajv({ allErrors: true, strict: false }));
  const validate = ajv.compile(readJson(path.join(dir, "agent.schema.json")) as object);
  const ok = validate(readJson(path.join(dir, "crow", "agent.json")));
  assert.ok(ok, ajv.errorsText(validate.errors));
  // The schema can still tell a bad entry: the check above is not vacuous.
  assert.equal(validate({ id: "Crow!", name: "", version: "x", description: "d", distribution: {} }), false);
});

test("the entry's id is its directory, its version the package's, and it launches the published package's ACP mode", () => {
  const entry = readJson(path.join(dir, "crow", "agent.json")) as Entry;
  const version = (readJson(path.join(REPO_ROOT, "package.json")) as { version: string }).version;
  assert.equal(entry.id, "crow");
  assert.equal(entry.version, version);
  assert.deepEqual(entry.distribution.npx, { package: `crow-agent@${version}`, args: ["acp"] });
});

test("icon.svg is what the registry asks for: 16x16, monochrome through currentColor", () => {
  const svg = readFileSync(path.join(dir, "crow", "icon.svg"), "utf8");
  assert.match(svg, /^<svg [^>]*width="16" height="16" viewBox="0 0 16 16"/);
  assert.match(svg, /fill="currentColor"/);
  assert.doesNotMatch(svg, /#[0-9a-f]{3,6}\b|rgb\(|<image/i, "no fixed colors, no embedded images");
});
