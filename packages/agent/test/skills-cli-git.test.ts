// `crow skills` over a git source: a bare repository made in the test (no network), added, updated, reproduced on a
// fresh home from its lockfile, refused when the lock no longer matches, listed, trusted and removed.
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, before, test } from "node:test";
import { pathToFileURL } from "node:url";
import { type TempWorkspace, tempWorkspace } from "@crow/testkit";
import { crowSkills, folderDigest, git, readJson, skillMd } from "./skills-helpers.js";

interface Lock {
  version: number;
  skills: Record<
    string,
    {
      source: string;
      sourceType: string;
      computedHash: string;
      resolved?: string;
      skillPath: string;
      sourceUrl?: string;
      files: Record<string, string>;
    }
  >;
}

let ws: TempWorkspace;
let bare: string;
let work: string;
let project: string;
const homes = () => ({ home: ws.path("home"), crowHome: ws.path("crow-home") });

before(async () => {
  ws = await tempWorkspace("crow-skills-git-");
  work = ws.path("work");
  await ws.write("work/skills/pdf-tools/SKILL.md", skillMd("pdf-tools", "Fill and merge PDF forms."));
  await ws.write("work/skills/pdf-tools/references/FORMS.md", "# Forms\n");
  await ws.write("work/skills/release-notes/SKILL.md", skillMd("release-notes", "Write release notes from git log."));
  git(work, "init", "-q", "-b", "main");
  git(work, "add", ".");
  git(work, "commit", "-q", "-m", "skills");
  bare = ws.path("skills.git");
  git(ws.dir, "clone", "-q", "--bare", work, bare);
  git(work, "remote", "add", "origin", bare);
  project = ws.path("project");
  mkdirSync(project);
  git(project, "init", "-q");
  mkdirSync(ws.path("home"));
});

after(() => ws.cleanup());

test("a source with several skills and no terminal: listed, exit 2, told to pass --skill or --all, nothing written", async () => {
  const run = await crowSkills(["add", bare], { cwd: project, ...homes() });
  assert.equal(run.code, 2, run.stderr);
  assert.match(run.stderr, /pdf-tools/);
  assert.match(run.stderr, /release-notes/);
  assert.match(run.stderr, /--skill NAME.*--all/);
  assert.equal(existsSync(path.join(project, ".agents")), false);
  assert.equal(existsSync(path.join(project, "skills-lock.json")), false);
  const missing = await crowSkills(["add", "./no-such-folder"], { cwd: project, ...homes() });
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /no-such-folder does not exist/);
});

test("add from a file:// git URL installs into the project, locks commit and digest, audits; update shows the change", async () => {
  const url = pathToFileURL(bare).href;
  const run = await crowSkills(["add", url, "--skill", "pdf-tools"], { cwd: project, ...homes() });
  assert.equal(run.code, 0, run.stderr);
  // Installed into a project not yet trusted: the user is told the skill waits for `crow skills trust`.
  assert.match(run.stderr, /is not trusted yet: .*crow skills trust/);
  const installed = path.join(project, ".agents", "skills", "pdf-tools");
  assert.equal(readFileSync(path.join(installed, "references", "FORMS.md"), "utf8"), "# Forms\n");
  assert.equal(existsSync(path.join(project, ".agents", "skills", "release-notes")), false);
  const firstCommit = git(work, "rev-parse", "HEAD");
  const lock = readJson(path.join(project, "skills-lock.json")) as Lock;
  const entry = lock.skills["pdf-tools"];
  assert.equal(lock.version, 1);
  assert.equal(entry?.source, url);
  assert.equal(entry?.sourceType, "git");
  assert.equal(entry?.resolved, firstCommit);
  assert.equal(entry?.skillPath, "skills/pdf-tools/SKILL.md");
  assert.equal(entry?.sourceUrl, url, "the skills CLI's sourceUrl of a git source");
  assert.equal(entry?.computedHash, folderDigest(installed));
  const auditLog = readFileSync(path.join(homes().crowHome, "skills-audit.log"), "utf8").trim().split("\n");
  const record = JSON.parse(auditLog.at(-1) ?? "{}") as Record<string, string>;
  assert.equal(record.action, "add");
  assert.equal(record.digest, entry?.computedHash);

  // Upstream moves on: one file changed, one added.
  writeFileSync(path.join(work, "skills/pdf-tools/SKILL.md"), skillMd("pdf-tools", "Fill, merge and split PDF forms."));
  await ws.write("work/skills/pdf-tools/references/SPLIT.md", "# Split\n");
  git(work, "add", ".");
  git(work, "commit", "-q", "-m", "split");
  git(work, "push", "-q", "origin", "main");
  const secondCommit = git(work, "rev-parse", "HEAD");
  const update = await crowSkills(["update"], { cwd: project, ...homes() });
  assert.equal(update.code, 0, update.stderr);
  assert.match(
    update.stdout,
    new RegExp(
      `pdf-tools: ${firstCommit.slice(0, 12)} → ${secondCommit.slice(0, 12)}: 1 added \\(references/SPLIT.md\\), 1 changed \\(SKILL.md\\)`,
    ),
  );
  assert.match(readFileSync(path.join(installed, "SKILL.md"), "utf8"), /split PDF/);
  const updated = (readJson(path.join(project, "skills-lock.json")) as Lock).skills["pdf-tools"];
  assert.equal(updated?.resolved, secondCommit);
  assert.equal(updated?.computedHash, folderDigest(installed));
  const again = await crowSkills(["update", "pdf-tools"], { cwd: project, ...homes() });
  assert.match(again.stdout, /pdf-tools: up to date/);
});

test("install on a fresh HOME and CROW_HOME reproduces the lockfile's digests; a lock that no longer matches is refused", async () => {
  const lockText = readFileSync(path.join(project, "skills-lock.json"), "utf8");
  const clone = ws.path("clone");
  mkdirSync(clone);
  git(clone, "init", "-q");
  writeFileSync(path.join(clone, "skills-lock.json"), lockText);
  const fresh = { home: ws.path("home2"), crowHome: ws.path("crow-home2") };
  mkdirSync(fresh.home);
  const run = await crowSkills(["install"], { cwd: clone, ...fresh });
  assert.equal(run.code, 0, run.stderr);
  const lock = JSON.parse(lockText) as Lock;
  assert.equal(folderDigest(path.join(clone, ".agents/skills/pdf-tools")), lock.skills["pdf-tools"]?.computedHash);
  assert.equal(readFileSync(path.join(clone, "skills-lock.json"), "utf8"), lockText);

  // A lockfile whose SKILL.md digest differs from the source's: refused, naming the file, nothing installed.
  const tampered = ws.path("tampered");
  mkdirSync(tampered);
  git(tampered, "init", "-q");
  const entry = lock.skills["pdf-tools"];
  assert.ok(entry);
  entry.computedHash = "0".repeat(64);
  entry.files["SKILL.md"] = "0".repeat(64);
  writeFileSync(path.join(tampered, "skills-lock.json"), JSON.stringify(lock));
  const refused = await crowSkills(["install"], { cwd: tampered, ...fresh });
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /pdf-tools: .*1 changed \(SKILL\.md\)/);
  assert.match(refused.stderr, /nothing installed/);
  assert.equal(existsSync(path.join(tampered, ".agents")), false);
});

test("list shows source, scope, validity and trust; trust flips it; remove deletes folder and lock entry", async () => {
  const listed = await crowSkills(["list", "--json"], { cwd: project, ...homes() });
  assert.equal(listed.code, 0, listed.stderr);
  const skills = JSON.parse(listed.stdout) as {
    name: string;
    scope: string;
    source: string;
    valid: boolean;
    trusted: boolean;
  }[];
  const pdf = skills.find((s) => s.name === "pdf-tools");
  assert.deepEqual(
    { scope: pdf?.scope, source: pdf?.source, valid: pdf?.valid, trusted: pdf?.trusted },
    { scope: "project", source: pathToFileURL(bare).href, valid: true, trusted: false },
  );
  const text = await crowSkills(["list"], { cwd: project, ...homes() });
  assert.match(text.stdout, /pdf-tools {2}project .*untrusted project: run crow skills trust/);

  const trust = await crowSkills(["trust"], { cwd: project, ...homes() });
  assert.equal(trust.code, 0, trust.stderr);
  const after = JSON.parse((await crowSkills(["list", "--json"], { cwd: project, ...homes() })).stdout) as {
    name: string;
    trusted: boolean;
  }[];
  assert.equal(after.find((s) => s.name === "pdf-tools")?.trusted, true);

  const found = await crowSkills(["find", "merge pdf"], { cwd: project, ...homes() });
  assert.equal(found.code, 0, found.stderr);
  assert.match(found.stdout, /^pdf-tools /);

  const removed = await crowSkills(["remove", "pdf-tools"], { cwd: project, ...homes() });
  assert.equal(removed.code, 0, removed.stderr);
  assert.equal(existsSync(path.join(project, ".agents/skills/pdf-tools")), false);
  assert.deepEqual((readJson(path.join(project, "skills-lock.json")) as Lock).skills, {});
  const missing = await crowSkills(["remove", "pdf-tools"], { cwd: project, ...homes() });
  assert.equal(missing.code, 2);
});

test("a marketplace file whose plugin lives in a git repository: fetched with git and locked to that repository", async () => {
  const url = pathToFileURL(bare).href;
  const market = await ws.write(
    "market.json",
    JSON.stringify({ name: "m", owner: { name: "o" }, plugins: [{ name: "remote", source: { source: "url", url } }] }),
  );
  const run = await crowSkills(["add", market, "--skill", "release-notes", "--global"], { cwd: project, ...homes() });
  assert.equal(run.code, 0, run.stderr);
  const lock = readJson(path.join(homes().home, ".agents", "skills-lock.json")) as Lock;
  const entry = lock.skills["release-notes"];
  assert.deepEqual(
    { source: entry?.source, sourceType: entry?.sourceType, skillPath: entry?.skillPath, resolved: entry?.resolved },
    {
      source: url,
      sourceType: "git",
      skillPath: "skills/release-notes/SKILL.md",
      resolved: git(work, "rev-parse", "HEAD"),
    },
  );
  assert.ok(existsSync(path.join(homes().home, ".agents", "skills", "release-notes", "SKILL.md")));
});
