// Attacks on `crow skills` through git, from the seat of whoever wrote a committed skills-lock.json or a fetched
// marketplace.json: a value shaped like a git option (`--upload-pack=<command>`) in a lock entry's `resolved`, `ref`
// or `source`, or in a marketplace plugin's `ref`, must never reach git as an option (on 0a50d1c each ran its
// command: install, update ×2, add and even the read-only find --source). Each case checks that the planted command
// did not run and that the refusal names the field. Bare repositories made here, no network.
import assert from "node:assert/strict";
import { chmodSync, existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, before, test } from "node:test";
import { pathToFileURL } from "node:url";
import { type TempWorkspace, tempWorkspace } from "@crow/testkit";
import { crowSkills, folderDigest, git, skillMd } from "./skills-helpers.js";

let ws: TempWorkspace;
let url: string;
let commit: string;
let digest: string;
let counter = 0;
const homes = () => ({ home: ws.path("home"), crowHome: ws.path("crow-home") });

before(async () => {
  ws = await tempWorkspace("crow-skills-attack-git-");
  const work = ws.path("work");
  await ws.write("work/skills/pdf-tools/SKILL.md", skillMd("pdf-tools", "Fill and merge PDF forms."));
  git(work, "init", "-q", "-b", "main");
  git(work, "add", ".");
  git(work, "commit", "-q", "-m", "skills");
  commit = git(work, "rev-parse", "HEAD");
  digest = folderDigest(path.join(work, "skills", "pdf-tools"));
  const bare = ws.path("skills.git");
  git(ws.dir, "clone", "-q", "--bare", work, bare);
  url = pathToFileURL(bare).href;
  mkdirSync(ws.path("home"));
});

after(() => ws.cleanup());

/** A fresh marker file and the option that would create it if git took it as `--upload-pack`. */
function payload(): { marker: string; value: string } {
  counter += 1;
  const marker = ws.path(`ran-${counter}`);
  return { marker, value: `--upload-pack=touch ${marker};git-upload-pack` };
}

/** A project (a git repository) whose committed skills-lock.json holds `entry` as skill pdf-tools. */
function projectWithLock(entry: Record<string, unknown>): string {
  counter += 1;
  const project = ws.path(`project-${counter}`);
  mkdirSync(project);
  git(project, "init", "-q");
  const locked = { sourceType: "git", computedHash: digest, path: "skills/pdf-tools", files: {}, ...entry };
  writeFileSync(
    path.join(project, "skills-lock.json"),
    JSON.stringify({ version: 1, skills: { "pdf-tools": locked } }),
  );
  return project;
}

/** A local marketplace whose one plugin lives in the bare repository at `ref`. */
function marketplace(ref: string): string {
  counter += 1;
  const dir = ws.path(`market-${counter}`);
  mkdirSync(path.join(dir, ".claude-plugin"), { recursive: true });
  const plugins = [{ name: "remote", source: { source: "git", url, ref } }];
  writeFileSync(path.join(dir, ".claude-plugin", "marketplace.json"), JSON.stringify({ name: "m", plugins }));
  return dir;
}

function assertNotRun(marker: string, run: { code: number | null; stderr: string }, field: RegExp): void {
  assert.equal(existsSync(marker), false, `the planted git option ran its command (stderr: ${run.stderr})`);
  assert.notEqual(run.code, 0, run.stderr);
  assert.match(run.stderr, field);
}

test("install: a lock entry's `resolved` shaped like a git option is refused, naming the entry and field", async () => {
  const { marker, value } = payload();
  const project = projectWithLock({ source: url, resolved: value });
  const run = await crowSkills(["install"], { cwd: project, ...homes() });
  assertNotRun(marker, run, /skills-lock\.json: entry 'pdf-tools' field resolved: .*40 or 64 hex/);
  assert.equal(existsSync(path.join(project, ".agents")), false);
});

test("update: a lock entry's `ref` shaped like a git option is refused, naming the field", async () => {
  const { marker, value } = payload();
  const project = projectWithLock({ source: url, ref: value, resolved: commit });
  const run = await crowSkills(["update"], { cwd: project, ...homes() });
  assertNotRun(marker, run, /skills-lock\.json: entry 'pdf-tools' field ref: /);
});

test("update: a lock entry's `source` shaped like a git option (the URL moved to `ref`) is refused", async () => {
  const { marker, value } = payload();
  const project = projectWithLock({ source: value, ref: url, resolved: commit });
  const run = await crowSkills(["update"], { cwd: project, ...homes() });
  assertNotRun(marker, run, /skills-lock\.json: entry 'pdf-tools' field source: /);
});

test("add: a marketplace plugin's `ref` shaped like a git option is refused, naming the plugin and field", async () => {
  const { marker, value } = payload();
  const run = await crowSkills(["add", marketplace(value), "--all", "--global"], { cwd: ws.dir, ...homes() });
  assertNotRun(marker, run, /marketplace\.json: plugin 'remote' field ref: /);
  assert.equal(existsSync(path.join(ws.path("home"), ".agents")), false);
});

test("find --source (read-only): a marketplace plugin's `ref` shaped like a git option runs nothing", async () => {
  const { marker, value } = payload();
  const run = await crowSkills(["find", "pdf", "--source", marketplace(value)], { cwd: ws.dir, ...homes() });
  assertNotRun(marker, run, /marketplace\.json: plugin 'remote' field ref: /);
});

test("refs and sources that git would misread are refused before git runs; honest ones still work", async () => {
  // Not options, but still not refs: check-ref-format's rules (`..`, `@{`, a trailing `.lock`, control characters).
  for (const ref of ["main..HEAD", "a@{1}", "x.lock", "a b", "-x"]) {
    const run = await crowSkills(["find", "pdf", "--source", marketplace(ref)], { cwd: ws.dir, ...homes() });
    assert.notEqual(run.code, 0, ref);
    assert.match(run.stderr, /field ref: .*not a valid git ref/, ref);
  }
  // A SOURCE typed on the command line: its `#ref` is checked the same way.
  const { marker, value } = payload();
  const typed = await crowSkills(["add", `${url}#${value}`, "--global"], { cwd: ws.dir, ...homes() });
  assertNotRun(marker, typed, /ref .*not a valid git ref/);
  // A lock `source` that is not a git URL at all (git's ext:: transport runs a command).
  const ext = projectWithLock({ source: "ext::sh -c touch% /tmp/x", resolved: commit });
  const refusedExt = await crowSkills(["install"], { cwd: ext, ...homes() });
  assert.equal(refusedExt.code, 1);
  assert.match(refusedExt.stderr, /field source: .*not a git URL/);
  // The honest lock and marketplace still install.
  const honest = projectWithLock({ source: url, ref: "main", resolved: commit });
  const ok = await crowSkills(["install"], { cwd: honest, ...homes() });
  assert.equal(ok.code, 0, ok.stderr);
  assert.deepEqual(readdirSync(path.join(honest, ".agents", "skills")), ["pdf-tools"]);
  const found = await crowSkills(["find", "pdf", "--source", marketplace("main")], { cwd: ws.dir, ...homes() });
  assert.equal(found.code, 0, found.stderr);
  assert.match(found.stdout, /^pdf-tools /);
});

test("a `git` planted in the project and on PATH (a .venv/bin the sandbox could write) is never the git that runs", async () => {
  const { marker } = payload();
  const project = projectWithLock({ source: url, resolved: commit });
  const bin = path.join(project, ".venv", "bin");
  mkdirSync(bin, { recursive: true });
  writeFileSync(
    path.join(bin, "git"),
    `#!/bin/sh\ntouch ${marker}\nexec /usr/bin/env -i PATH=/usr/bin:/bin git "$@"\n`,
  );
  chmodSync(path.join(bin, "git"), 0o755);
  const env = { PATH: `${bin}:${process.env.PATH ?? "/usr/bin:/bin"}` };
  const run = await crowSkills(["install"], { cwd: project, ...homes(), env });
  assert.equal(existsSync(marker), false, `the planted git ran (stderr: ${run.stderr})`);
  assert.equal(run.code, 0, run.stderr);
  assert.deepEqual(readdirSync(path.join(project, ".agents", "skills")), ["pdf-tools"]);
});
