/** The write rule the file tools apply on the real path of the directory they hold open (`checkWritableAt`). */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { checkWritableAt } from "../src/sandbox/roots.js";

test("anything under a writable root's .git, and .git itself, is read-only; nested roots each keep theirs", () => {
  const ws = realpathSync(mkdtempSync(path.join(os.tmpdir(), "crow-roots-")));
  try {
    const sub = path.join(ws, "sub");
    mkdirSync(path.join(sub, ".git"), { recursive: true });
    mkdirSync(path.join(ws, ".git"));
    const policy = { mode: "workspace-write" as const, writable: [ws, sub], readOnly: [], network: true };
    const check = (file: string) => checkWritableAt(file, file, policy);
    for (const file of [".git", ".git/config", ".git/commondir", ".git/hooks/pre-commit", "sub/.git/info/x"]) {
      assert.match(check(path.join(ws, file)) ?? "", /\.git stays read-only in the sandbox/, file);
    }
    assert.equal(check(path.join(ws, "src", "a.ts")), undefined);
    assert.equal(check(path.join(ws, ".github", "ci.yml")), undefined, ".github is not .git");
    assert.equal(check(path.join(sub, "b.ts")), undefined);
    assert.match(check("/etc/x") ?? "", /outside the sandbox's writable directories/);
    assert.equal(checkWritableAt("/etc/x", "/etc/x", { ...policy, mode: "off" }), undefined);
  } finally {
    rmSync(ws, { recursive: true, force: true });
  }
});
