// `crow skills update` and `add` telling the truth, over bare git repositories made here: an update goes on past a
// skill deleted upstream (reported, kept, exit 1) and moves `resolved` even when no file changed; installing over a
// hand-written skill or from another source names what it replaces and needs --yes; dropped links are listed.
// On main: the deleted skill stopped every update ("has no SKILL.md … any more", the others stayed old), `resolved`
// stayed old on "up to date", and both overwrites happened without a word.
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, before, test } from "node:test";
import { type TempWorkspace, tempWorkspace } from "@crow/testkit";
import { crowSkills, git, readJson, skillMd } from "./skills-helpers.js";

let ws: TempWorkspace;
let counter = 0;
const homes = () => ({ home: ws.path("home"), crowHome: ws.path("crow-home") });

before(async () => {
  ws = await tempWorkspace("crow-skills-truth-");
  mkdirSync(ws.path("home"));
  mkdirSync(ws.path("crow-home"));
});

after(() => ws.cleanup());

/** A work tree with `skills` (name → description) under skills/, and its bare clone; returns both and the URL. */
function upstream(skills: Record<string, string>) {
  counter += 1;
  const work = ws.path(`work-${counter}`);
  for (const [name, description] of Object.entries(skills)) {
    mkdirSync(path.join(work, "skills", name), { recursive: true });
    writeFileSync(path.join(work, "skills", name, "SKILL.md"), skillMd(name, description));
  }
  git(work, "init", "-q", "-b", "main");
  git(work, "add", "-A");
  git(work, "commit", "-q", "-m", "first");
  const bare = ws.path(`bare-${counter}.git`);
  git(ws.dir, "clone", "-q", "--bare", work, bare);
  return { work, bare, url: `file://${bare}` };
}

function push(work: string, bare: string, message: string): string {
  git(work, "add", "-A");
  git(work, "commit", "-q", "--allow-empty", "-m", message);
  git(work, "push", "-q", bare, "main");
  return git(work, "rev-parse", "HEAD");
}

function project(): string {
  counter += 1;
  const dir = ws.path(`project-${counter}`);
  mkdirSync(dir);
  git(dir, "init", "-q");
  return dir;
}

type Lock = { skills: Record<string, { resolved?: string; computedHash: string; source: string }> };

test("update: a skill deleted upstream is reported and kept, the others still update, resolved moves", async () => {
  const { work, bare, url } = upstream({ alpha: "First skill.", beta: "Second skill.", gamma: "Third skill." });
  const dir = project();
  const add = await crowSkills(["add", url, "--all"], { cwd: dir, ...homes() });
  assert.equal(add.code, 0, add.stderr);
  rmSync(path.join(work, "skills", "alpha"), { recursive: true });
  writeFileSync(path.join(work, "skills", "beta", "SKILL.md"), skillMd("beta", "Second skill, better."));
  const head = push(work, bare, "drop alpha, change beta");
  const run = await crowSkills(["update"], { cwd: dir, ...homes() });
  assert.equal(run.code, 1, `${run.stdout}\n${run.stderr}`);
  assert.match(
    run.stderr,
    /^alpha: not updated: skills\/alpha\/SKILL\.md is no longer in file:\/\/.*; kept as installed \(crow skills remove alpha removes it\)$/m,
  );
  assert.match(run.stdout, /^beta: [0-9a-f]{12} → [0-9a-f]{12}: 1 changed \(SKILL\.md\)$/m);
  assert.match(run.stdout, /^gamma: up to date \(no file changed; [0-9a-f]{12} → [0-9a-f]{12}\)$/m);
  const lock = readJson(path.join(dir, "skills-lock.json")) as Lock;
  assert.equal(lock.skills.beta?.resolved, head);
  assert.equal(lock.skills.gamma?.resolved, head, "resolved moves although no file changed");
  assert.notEqual(lock.skills.alpha?.resolved, head);
  assert.ok(existsSync(path.join(dir, ".agents", "skills", "alpha", "SKILL.md")), "kept");
});

test("add over a hand-written skill or from another source: named, refused without --yes, replaced with it", async () => {
  const first = upstream({ notes: "Take notes." });
  const second = upstream({ notes: "Take notes, differently." });
  const dir = project();
  const own = path.join(dir, ".agents", "skills", "notes");
  mkdirSync(own, { recursive: true });
  writeFileSync(path.join(own, "SKILL.md"), skillMd("notes", "My own notes skill."));
  const refused = await crowSkills(["add", first.url], { cwd: dir, ...homes() });
  assert.equal(refused.code, 2, refused.stderr);
  assert.match(
    refused.stderr,
    /overwrite: .*\.agents\/skills\/notes \(not in skills-lock\.json: hand-written or another tool's\) would be replaced by file:\/\/.*:skills\/notes\/SKILL\.md/,
  );
  assert.match(refused.stderr, /pass --yes to replace; nothing installed/);
  assert.match(readFileSync(path.join(own, "SKILL.md"), "utf8"), /My own notes skill/);
  const replaced = await crowSkills(["add", first.url, "--yes"], { cwd: dir, ...homes() });
  assert.equal(replaced.code, 0, replaced.stderr);
  // The same source again: a reinstall, no question.
  const again = await crowSkills(["add", first.url], { cwd: dir, ...homes() });
  assert.equal(again.code, 0, again.stderr);
  assert.doesNotMatch(again.stderr, /overwrite:/);
  // Another source: named with the one it replaces.
  const switched = await crowSkills(["add", second.url], { cwd: dir, ...homes() });
  assert.equal(switched.code, 2, switched.stderr);
  assert.match(
    switched.stderr,
    new RegExp(`overwrite: .*notes \\(locked from ${first.url}:skills/notes\\) would be replaced by ${second.url}`),
  );
  const lock = readJson(path.join(dir, "skills-lock.json")) as Lock;
  assert.equal(lock.skills.notes?.source, first.url);
});

test("links inside a skill are listed as not installed", async () => {
  const { work, bare, url } = upstream({ linked: "Has a link." });
  symlinkSync("../../README.md", path.join(work, "skills", "linked", "readme-link"));
  writeFileSync(path.join(work, "README.md"), "hello\n");
  push(work, bare, "link");
  const dir = project();
  const run = await crowSkills(["add", url], { cwd: dir, ...homes() });
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stderr, /skill linked: readme-link is a link or not a regular file; not installed/);
  assert.equal(existsSync(path.join(dir, ".agents", "skills", "linked", "readme-link")), false);
});
