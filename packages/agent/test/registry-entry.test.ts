/**
 * Crow's entry for the ACP agent registry (packaging/acp-registry/crow/: agent.json + icon.svg, the layout of the
 * registry repository), validated against the registry's own JSON schema (copied in, source named in its $comment),
 * and kept in step with the published package: same version, launched as `npx crow-agent@<version> acp`.
 *
 * The registry lists only agents that offer Agent Auth or Terminal Auth, and its format has no field for it: its CI
 * launches the entry's command and reads `authMethods` from the answer to `initialize` (the registry's
 * .github/workflows/client.py). The last test does the same handshake with the built crow.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { CROW_BIN, REPO_ROOT } from "@crow/testkit";
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

test("launched as the entry says, in an empty HOME, crow answers the registry's auth check with Terminal Auth", async () => {
  const entry = readJson(path.join(dir, "crow", "agent.json")) as Entry;
  const home = mkdtempSync(path.join(tmpdir(), "crow-registry-"));
  // The verifier's environment: a fresh HOME, PATH, TERM=dumb, nothing else (no provider, no model).
  const child = spawn(process.execPath, [CROW_BIN, ...(entry.distribution.npx?.args ?? [])], {
    env: { PATH: process.env.PATH ?? "", HOME: home, TERM: "dumb" },
    stdio: ["pipe", "pipe", "pipe"],
  });
  try {
    const answer = new Promise<string>((resolve) => {
      let out = "";
      child.stdout.on("data", (d: Buffer) => {
        out += d.toString();
        if (out.includes("\n")) resolve(out.slice(0, out.indexOf("\n")));
      });
    });
    // The request client.py sends: its client announces terminal auth only through the older _meta flag.
    const initialize = {
      protocolVersion: 1,
      clientInfo: { name: "ACP Registry Validator", version: "1.0.0" },
      clientCapabilities: {
        terminal: true,
        fs: { readTextFile: true, writeTextFile: true },
        _meta: { terminal_output: true, "terminal-auth": true },
      },
    };
    child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: initialize })}\n`);
    const response = JSON.parse(await answer) as { result?: { authMethods?: Array<{ type?: string; id: string }> } };
    // client.py accepts a method of type "agent" or "terminal" (type read directly, else from _meta).
    const methods = response.result?.authMethods ?? [];
    assert.deepEqual(
      methods.map((m) => [m.type, m.id]),
      [["terminal", "crow-init"]],
    );
  } finally {
    child.kill();
    rmSync(home, { recursive: true, force: true });
  }
});
