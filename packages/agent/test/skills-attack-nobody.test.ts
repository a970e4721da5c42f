// The `crow skills` attacks of skills-attack-git and skills-attack-paths, run by an unprivileged user (`nobody`,
// through setpriv; skipped when the tests do not run as root). The guards are checks on values and on open
// descriptors, not on permissions, so they must hold the same way for an ordinary user: a planted git option runs
// nothing, a lock entry named ../../.git leaves .git alone, a hard link to the user's own .env is not copied.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, linkSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { pathToFileURL } from "node:url";
import { crowSkills, folderDigest, git, skillMd } from "./skills-helpers.js";

const NOBODY = 65534;
const asRoot = process.getuid?.() === 0;

describe("crow skills attacks as an unprivileged user", { skip: asRoot ? undefined : "setpriv needs root" }, () => {
  let base: string;
  let homes: { home: string; crowHome: string; uid: number };
  let url: string;
  let commit: string;
  let digest: string;
  let project: string;
  let gitConfig: string;

  before(async () => {
    base = await mkdtemp("/var/tmp/crow-skills-nobody-");
    homes = { home: path.join(base, "home"), crowHome: path.join(base, "crow-home"), uid: NOBODY };
    mkdirSync(homes.home);
    mkdirSync(homes.crowHome);
    const work = path.join(base, "work");
    mkdirSync(path.join(work, "skills", "pdf-tools"), { recursive: true });
    writeFileSync(path.join(work, "skills", "pdf-tools", "SKILL.md"), skillMd("pdf-tools", "Fill PDF forms."));
    git(work, "init", "-q", "-b", "main");
    git(work, "add", ".");
    git(work, "commit", "-q", "-m", "skills");
    commit = git(work, "rev-parse", "HEAD");
    digest = folderDigest(path.join(work, "skills", "pdf-tools"));
    git(base, "clone", "-q", "--bare", work, path.join(base, "skills.git"));
    url = pathToFileURL(path.join(base, "skills.git")).href;
    project = path.join(base, "project");
    mkdirSync(project);
    git(project, "init", "-q");
    gitConfig = readFileSync(path.join(project, ".git", "config"), "utf8");
    // Everything the user's own, as it would be (git refuses repositories another user owns).
    execFileSync("chown", ["-R", `${NOBODY}:${NOBODY}`, base]);
  });

  after(() => rm(base, { recursive: true, force: true }));

  function lock(skills: Record<string, Record<string, unknown>>): void {
    writeFileSync(path.join(project, "skills-lock.json"), JSON.stringify({ version: 1, skills }));
    execFileSync("chown", [`${NOBODY}:${NOBODY}`, path.join(project, "skills-lock.json")]);
  }

  test("a lock `resolved` shaped like a git option runs nothing", async () => {
    const marker = path.join(base, "ran");
    const payload = `--upload-pack=touch ${marker};git-upload-pack`;
    lock({
      "pdf-tools": {
        source: url,
        sourceType: "git",
        resolved: payload,
        computedHash: digest,
        path: "skills/pdf-tools",
        files: {},
      },
    });
    const run = await crowSkills(["install"], { cwd: project, ...homes });
    assert.equal(existsSync(marker), false, run.stderr);
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stderr, /field resolved: /);
    // The honest entry installs as this user.
    lock({
      "pdf-tools": {
        source: url,
        sourceType: "git",
        resolved: commit,
        computedHash: digest,
        path: "skills/pdf-tools",
        files: {},
      },
    });
    const ok = await crowSkills(["install"], { cwd: project, ...homes });
    assert.equal(ok.code, 0, ok.stderr);
    assert.ok(existsSync(path.join(project, ".agents", "skills", "pdf-tools", "SKILL.md")));
  });

  test("a lock entry named ../../.git and `remove ../../.git` leave .git alone", async () => {
    const evil = path.join(project, "vendor", "notes");
    mkdirSync(evil, { recursive: true });
    writeFileSync(path.join(evil, "SKILL.md"), skillMd("notes", "Take notes."));
    writeFileSync(path.join(evil, "config"), "[core]\n\tbare = true\n");
    execFileSync("chown", ["-R", `${NOBODY}:${NOBODY}`, path.join(project, "vendor")]);
    lock({
      "../../.git": { source: evil, sourceType: "local", computedHash: folderDigest(evil), path: "", files: {} },
    });
    const run = await crowSkills(["install"], { cwd: project, ...homes });
    assert.equal(run.code, 1, run.stderr);
    const removed = await crowSkills(["remove", "--", "../../.git"], { cwd: project, ...homes });
    assert.equal(removed.code, 2, removed.stderr);
    assert.equal(readFileSync(path.join(project, ".git", "config"), "utf8"), gitConfig);
    assert.ok(existsSync(path.join(project, ".git", "HEAD")));
  });

  test("a hard link to the user's own .env in a local skill folder is refused", async () => {
    const dotenv = path.join(homes.crowHome, ".env");
    writeFileSync(dotenv, "OPENAI_API_KEY=sk-nobody-secret\n", { mode: 0o600 });
    const skill = path.join(base, "linked", "helper");
    mkdirSync(skill, { recursive: true });
    writeFileSync(path.join(skill, "SKILL.md"), skillMd("helper", "Helps."));
    execFileSync("chown", ["-R", `${NOBODY}:${NOBODY}`, dotenv, path.join(base, "linked")]);
    linkSync(dotenv, path.join(skill, "notes.md"));
    const run = await crowSkills(["add", skill, "--global"], { cwd: base, ...homes });
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stderr, /notes\.md is a hard link to .*\.env/);
    assert.equal(existsSync(path.join(homes.home, ".agents", "skills", "helper")), false);
  });
});
