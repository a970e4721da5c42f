// Attacks on where `crow skills` writes and what it copies, from the seat of whoever wrote a committed
// skills-lock.json, a skill folder or a planted link: a lock entry named `../../.git` (on 0a50d1c `install` replaced
// the repository's `.git` with the entry's folder, whose config then ran on the next `git status`), `remove
// ../../.git` (deleted `.git`), a lock `path` that climbs out of its source, `.agents` swapped for a link to elsewhere,
// and a hard link to Crow's `.env` inside a local skill folder (copied into the installed skill).
import assert from "node:assert/strict";
import { existsSync, linkSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, before, test } from "node:test";
import { type TempWorkspace, tempWorkspace } from "@crow/testkit";
import { crowSkills, folderDigest, git, skillMd } from "./skills-helpers.js";

let ws: TempWorkspace;
let counter = 0;
const homes = () => ({ home: ws.path("home"), crowHome: ws.path("crow-home") });

before(async () => {
  ws = await tempWorkspace("crow-skills-attack-paths-");
  mkdirSync(ws.path("home"));
  mkdirSync(ws.path("crow-home"));
});

after(() => ws.cleanup());

/** A git repository with one commit; returns its path and the contents of its `.git/config`. */
function repository(): { project: string; config: string } {
  counter += 1;
  const project = ws.path(`project-${counter}`);
  mkdirSync(project);
  git(project, "init", "-q");
  writeFileSync(path.join(project, "README.md"), "hello\n");
  git(project, "add", ".");
  git(project, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "x");
  return { project, config: readFileSync(path.join(project, ".git", "config"), "utf8") };
}

function assertGitIntact(project: string, config: string): void {
  assert.ok(existsSync(path.join(project, ".git", "HEAD")), ".git was replaced or deleted");
  assert.equal(readFileSync(path.join(project, ".git", "config"), "utf8"), config);
  assert.equal(git(project, "status", "--porcelain").includes("README"), false);
}

test("install: a lock entry named ../../.git (local source in the repository, digest matching) is refused; .git intact", async () => {
  const { project, config } = repository();
  // The entry's folder: a valid skill plus a git config whose fsmonitor would run on the next `git status`.
  const evil = path.join(project, "vendor", "notes");
  mkdirSync(evil, { recursive: true });
  writeFileSync(path.join(evil, "SKILL.md"), skillMd("notes", "Take notes."));
  writeFileSync(path.join(evil, "HEAD"), "ref: refs/heads/main\n");
  writeFileSync(path.join(evil, "config"), `[core]\n\tfsmonitor = touch ${ws.path("fsmonitor-ran")}\n`);
  const entry = { source: evil, sourceType: "local", computedHash: folderDigest(evil), path: "", files: {} };
  writeFileSync(
    path.join(project, "skills-lock.json"),
    JSON.stringify({ version: 1, skills: { "../../.git": entry } }),
  );
  const run = await crowSkills(["install"], { cwd: project, ...homes() });
  assert.equal(run.code, 1, run.stderr);
  assert.match(run.stderr, /skills-lock\.json: entry '\.\.\/\.\.\/\.git' field name: .*not a skill name/);
  assertGitIntact(project, config);
  assert.equal(existsSync(ws.path("fsmonitor-ran")), false);
});

test("remove: names that are not skill names are refused (exit 2) and nothing is deleted", async () => {
  const { project, config } = repository();
  mkdirSync(path.join(project, ".agents", "skills"), { recursive: true });
  for (const name of ["../../.git", "..", ".", "../skills", "a/b", "/etc", "-rf"]) {
    const run = await crowSkills(["remove", "--", name], { cwd: project, ...homes() });
    assert.equal(run.code, 2, `${name}: ${run.stderr}`);
    assert.match(run.stderr, /is not a skill name/, name);
  }
  assertGitIntact(project, config);
  assert.ok(existsSync(path.join(project, ".agents", "skills")));
});

test("install: a lock entry whose `path` climbs out of its source is refused, naming the field", async () => {
  const { project } = repository();
  const source = path.join(project, "vendor");
  mkdirSync(path.join(ws.path("outside"), "secret-skill"), { recursive: true });
  writeFileSync(path.join(ws.path("outside"), "secret-skill", "SKILL.md"), skillMd("secret-skill", "Outside."));
  mkdirSync(source, { recursive: true });
  const entry = {
    source,
    sourceType: "local",
    computedHash: folderDigest(path.join(ws.path("outside"), "secret-skill")),
    path: `../../outside/secret-skill`,
    files: {},
  };
  writeFileSync(
    path.join(project, "skills-lock.json"),
    JSON.stringify({ version: 1, skills: { "secret-skill": entry } }),
  );
  const run = await crowSkills(["install"], { cwd: project, ...homes() });
  assert.equal(run.code, 1, run.stderr);
  assert.match(run.stderr, /entry 'secret-skill' field path: /);
  assert.equal(existsSync(path.join(project, ".agents")), false);
});

test("install: lock keys are declared names now, but none that is unsafe becomes a path; skillPath cannot climb", async () => {
  const { project, config } = repository();
  const source = path.join(project, "vendor", "notes");
  mkdirSync(source, { recursive: true });
  writeFileSync(path.join(source, "SKILL.md"), skillMd("notes", "Take notes."));
  const entry = { source, sourceType: "local", computedHash: folderDigest(source), skillPath: "SKILL.md" };
  // Each of these would normalise to something harmless (`git`, `rf`, `a-b`); they are refused instead.
  for (const key of ["../../.git", ".git", "..", "-rf", "a/b", "A\\B", "Notes\u0000x", "   "]) {
    writeFileSync(path.join(project, "skills-lock.json"), JSON.stringify({ version: 1, skills: { [key]: entry } }));
    const run = await crowSkills(["install"], { cwd: project, ...homes() });
    assert.equal(run.code, 1, `${JSON.stringify(key)}: ${run.stderr}`);
    assert.match(run.stderr, /field name: .*is not a skill name/, key);
  }
  const outside = { ...entry, source: path.join(project, "vendor"), skillPath: "../../outside/secret-skill/SKILL.md" };
  writeFileSync(path.join(project, "skills-lock.json"), JSON.stringify({ version: 1, skills: { notes: outside } }));
  const climbed = await crowSkills(["install"], { cwd: project, ...homes() });
  assert.equal(climbed.code, 1, climbed.stderr);
  assert.match(climbed.stderr, /entry 'notes' field skillPath: .*climbs out/);
  assertGitIntact(project, config);
  assert.equal(existsSync(path.join(project, ".agents")), false);
});

test("add: .agents (or .agents/skills) swapped for a link to elsewhere is refused, nothing written through it", async () => {
  const { project } = repository();
  const skill = ws.path("plain/tidy");
  mkdirSync(skill, { recursive: true });
  writeFileSync(path.join(skill, "SKILL.md"), skillMd("tidy", "Tidy up."));
  const elsewhere = ws.path("elsewhere");
  mkdirSync(elsewhere);
  symlinkSync(elsewhere, path.join(project, ".agents"));
  const run = await crowSkills(["add", skill, "--project"], { cwd: project, ...homes() });
  assert.notEqual(run.code, 0, run.stderr);
  assert.match(run.stderr, /\.agents is a symbolic link/);
  assert.deepEqual(readdirSync(elsewhere), []);
});

test("add: a hard link to Crow's .env inside a local skill folder is refused; the secret is not copied", async () => {
  const dotenv = ws.path("crow-home/.env");
  writeFileSync(dotenv, "OPENAI_API_KEY=sk-secret-do-not-copy\n", { mode: 0o600 });
  const skill = ws.path("linked/helper");
  mkdirSync(skill, { recursive: true });
  writeFileSync(path.join(skill, "SKILL.md"), skillMd("helper", "Helps."));
  linkSync(dotenv, path.join(skill, "notes.md"));
  const run = await crowSkills(["add", skill, "--global"], { cwd: ws.dir, ...homes() });
  assert.equal(run.code, 1, run.stderr);
  assert.match(run.stderr, /notes\.md is a hard link to .*\.env.*refused/);
  const installed = path.join(ws.path("home"), ".agents", "skills", "helper");
  assert.equal(existsSync(installed), false);
});
