// How `crow skills add SOURCE` reads SOURCE: the forms the README and docs/skills.md promise.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { pathToFileURL } from "node:url";
import { parseSource } from "../src/skill-installer/sources.js";

test("GitHub shorthand, git URLs, npm, .well-known, local paths and bare repositories", () => {
  const cwd = mkdtempSync(path.join(tmpdir(), "crow-parse-"));
  try {
    assert.deepEqual(parseSource("anthropics/skills", cwd), {
      type: "github",
      source: "anthropics/skills",
      location: "https://github.com/anthropics/skills.git",
    });
    assert.deepEqual(parseSource("anthropics/skills/skills/pdf#v1.2", cwd), {
      type: "github",
      source: "anthropics/skills",
      location: "https://github.com/anthropics/skills.git",
      ref: "v1.2",
      subpath: "skills/pdf",
    });
    // `owner/repo@skill` names a skill as the skills CLI reads it; a ref goes after #, both as `#ref@skill`.
    assert.deepEqual(parseSource("vercel-labs/agent-skills@vercel-react-best-practices", cwd), {
      type: "github",
      source: "vercel-labs/agent-skills",
      location: "https://github.com/vercel-labs/agent-skills.git",
      skill: "vercel-react-best-practices",
    });
    assert.deepEqual(parseSource("vercel-labs/agent-skills#v2@deploy-to-vercel", cwd), {
      type: "github",
      source: "vercel-labs/agent-skills",
      location: "https://github.com/vercel-labs/agent-skills.git",
      ref: "v2",
      skill: "deploy-to-vercel",
    });
    assert.throws(() => parseSource("anthropics/skills/skills/pdf@v1.2", cwd), /write a ref with #/);
    // GitHub's /tree/<ref>/<path> URLs, as a browser shows them.
    assert.deepEqual(parseSource("https://github.com/anthropics/skills/tree/main/skills/pdf", cwd), {
      type: "github",
      source: "anthropics/skills",
      location: "https://github.com/anthropics/skills.git",
      ref: "main",
      subpath: "skills/pdf",
    });
    assert.deepEqual(parseSource("https://github.com/anthropics/skills", cwd), {
      type: "github",
      source: "anthropics/skills",
      location: "https://github.com/anthropics/skills.git",
    });
    // A bare host: its .well-known index first, git when it has none.
    assert.deepEqual(parseSource("https://skills.example.com/", cwd), {
      type: "well-known",
      source: "https://skills.example.com/.well-known/agent-skills/index.json",
      location: "https://skills.example.com/.well-known/agent-skills/index.json",
      orGit: "https://skills.example.com",
    });
    assert.deepEqual(parseSource("https://gitlab.com/a/b.git#main", cwd), {
      type: "git",
      source: "https://gitlab.com/a/b.git",
      location: "https://gitlab.com/a/b.git",
      ref: "main",
    });
    assert.equal(parseSource("git@github.com:a/b.git", cwd).type, "git");
    assert.deepEqual(parseSource("npm:@scope/skills@2.0.0", cwd), {
      type: "npm",
      source: "npm:@scope/skills",
      location: "@scope/skills",
      ref: "2.0.0",
    });
    assert.deepEqual(parseSource("https://example.com/.well-known/agent-skills", cwd), {
      type: "well-known",
      source: "https://example.com/.well-known/agent-skills/index.json",
      location: "https://example.com/.well-known/agent-skills/index.json",
    });
    mkdirSync(path.join(cwd, "my-skills"));
    assert.equal(parseSource("my-skills", cwd).type, "local");
    const bare = path.join(cwd, "repo.git");
    for (const dir of ["objects", "refs"]) mkdirSync(path.join(bare, dir), { recursive: true });
    rmSync(path.join(bare, "HEAD"), { force: true });
    assert.equal(parseSource(bare, cwd).type, "local");
    mkdirSync(path.join(bare, "HEAD"));
    assert.equal(parseSource(bare, cwd).location, pathToFileURL(bare).href);
    assert.throws(() => parseSource("./missing", cwd), /does not exist/);
    assert.throws(() => parseSource("npm:", cwd), /not an npm package/);
    assert.throws(() => parseSource("what is this", cwd), /cannot tell what "what is this" is/);
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
});
