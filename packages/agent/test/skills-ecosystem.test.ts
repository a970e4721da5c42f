// `crow skills` on what people publish and on what the `skills` CLI 1.7.4 wrote: the five repositories' shapes of
// fixtures/skills-ecosystem (made bare git repositories here, no network) installed with --all, and the lockfiles of
// fixtures/skills-cli-1.7.4 (written by the CLI itself installing those folders) restored, hashed and rewritten.
// On main before this work: 1 of the 48 skills installed (anthropics/skills refused "two skills are named
// algorithmic-art", one off-spec name refused a whole source), and `install` on the CLI's lockfile crashed
// ("Cannot read properties of undefined (reading 'split')").
import assert from "node:assert/strict";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, before, test } from "node:test";
import { type TempWorkspace, tempWorkspace } from "@crow/testkit";
import { crowSkills, folderDigest, git, readJson } from "./skills-helpers.js";

const FIXTURES = path.join(import.meta.dirname, "fixtures");
const ECOSYSTEM = path.join(FIXTURES, "skills-ecosystem");
const CLI_LOCKS = path.join(FIXTURES, "skills-cli-1.7.4");
/** The folder the CLI's git lockfile names its bare repositories in (fixtures/skills-cli-1.7.4/README.md). */
const CLI_REPOS = "file:///tmp/skills2/cli-run/repos/";
const REPOS = ["anthropics-skills", "vercel-agent-skills", "ccc", "bbrowning-marketplace", "vercel-skills"];

interface Entry {
  source: string;
  sourceUrl?: string;
  sourceType: string;
  skillPath?: string;
  computedHash: string;
  [field: string]: unknown;
}

let ws: TempWorkspace;
let counter = 0;
const homes = () => ({ home: ws.path("home"), crowHome: ws.path("crow-home") });

before(async () => {
  ws = await tempWorkspace("crow-skills-ecosystem-");
  mkdirSync(ws.path("home"));
  mkdirSync(ws.path("crow-home"));
  mkdirSync(ws.path("repos"));
  for (const name of REPOS) {
    const work = ws.path(`work-${name}`);
    cpSync(path.join(ECOSYSTEM, name), work, { recursive: true });
    git(work, "init", "-q", "-b", "main");
    git(work, "add", "-A");
    git(work, "commit", "-q", "-m", "fixture");
    git(ws.path("repos"), "clone", "-q", "--bare", work, `${name}.git`);
  }
});

after(() => ws.cleanup());

function repoUrl(name: string): string {
  return `file://${ws.path("repos")}/${name}.git`;
}

function project(): string {
  counter += 1;
  const dir = ws.path(`project-${counter}`);
  mkdirSync(dir);
  git(dir, "init", "-q");
  return dir;
}

function installed(dir: string): string[] {
  const skills = path.join(dir, ".agents", "skills");
  return existsSync(skills)
    ? readdirSync(skills)
        .filter((n) => !n.startsWith("."))
        .sort()
    : [];
}

function lockOf(dir: string): { version: number; skills: Record<string, Entry> } {
  return readJson(path.join(dir, "skills-lock.json")) as { version: number; skills: Record<string, Entry> };
}

/** The CLI's git lockfile with its repositories' folder made this test's. */
function cliGitLock(): string {
  return readFileSync(path.join(CLI_LOCKS, "skills-lock.git.json"), "utf8").replaceAll(
    CLI_REPOS,
    `file://${ws.path("repos")}/`,
  );
}

test("--all on the five repositories' shapes installs 47 skills (the CLI 48: template/ is in no plugin)", async () => {
  const counts: Record<string, number> = {};
  for (const name of REPOS) {
    const dir = project();
    const run = await crowSkills(["add", repoUrl(name), "--all", "--yes"], { cwd: dir, ...homes() });
    assert.equal(run.code, 0, `${name}: ${run.stderr}`);
    counts[name] = installed(dir).length;
    assert.doesNotMatch(
      run.stderr,
      /crow-skills-[A-Za-z0-9]{6}\//,
      "messages name the source, never a temporary folder",
    );
  }
  assert.deepEqual(counts, {
    "anthropics-skills": 17,
    "vercel-agent-skills": 7,
    ccc: 11,
    "bbrowning-marketplace": 11,
    "vercel-skills": 1,
  });
});

test("a marketplace of plugins with source ./ and skills lists: each skill once, labelled by its plugin", async () => {
  const dir = project();
  const run = await crowSkills(["add", repoUrl("anthropics-skills")], { cwd: dir, ...homes() });
  assert.equal(run.code, 2, run.stderr);
  assert.match(run.stderr, /This source has 17 skills/);
  assert.match(run.stderr, /^ {2}xlsx \(plugin document-skills\) /m);
  assert.match(run.stderr, /^ {2}algorithmic-art \(plugin example-skills\) /m);
  assert.match(run.stderr, /^ {2}claude-api \(plugin claude-api\) /m);
  // A 1 068-character description is listed on one line, cut.
  const line = run.stderr.split("\n").find((l) => l.startsWith("  claude-api")) ?? "";
  assert.ok(line.length < 160 && line.endsWith("…"), line);
  assert.doesNotMatch(run.stderr, /two skills are named/);
  // template/ is in no plugin: said, not offered (the CLI installs it too: 18).
  assert.match(run.stderr, /:template\/SKILL\.md is in no plugin of the marketplace: not offered/);
});

test("Title Case and name ≠ folder: installed under the normalised declared name, one notice each, locked as the CLI keys them", async () => {
  const dir = project();
  const run = await crowSkills(["add", repoUrl("bbrowning-marketplace"), "--skill", "pr-review", "--yes"], {
    cwd: dir,
    ...homes(),
  });
  assert.equal(run.code, 0, run.stderr);
  assert.deepEqual(installed(dir), ["reviewing-pull-requests"]);
  const notices = run.stderr.split("\n").filter((l) => l.startsWith("notice:"));
  assert.equal(notices.length, 1, run.stderr);
  assert.match(
    notices[0] ?? "",
    /installed as reviewing-pull-requests: its name "Reviewing Pull Requests" breaks a rule/,
  );
  const entry = lockOf(dir).skills["Reviewing Pull Requests"];
  assert.equal(entry?.skillPath, "bbrowning-claude/skills/pr-review/SKILL.md");
  assert.equal(entry?.sourceUrl, repoUrl("bbrowning-marketplace"));
  // `install` from that lock on a fresh checkout reproduces exactly what `add` installed.
  const again = project();
  writeFileSync(path.join(again, "skills-lock.json"), readFileSync(path.join(dir, "skills-lock.json")));
  const restored = await crowSkills(["install", "--yes"], { cwd: again, ...homes() });
  assert.equal(restored.code, 0, restored.stderr);
  assert.deepEqual(installed(again), ["reviewing-pull-requests"]);
  assert.equal(folderDigest(path.join(again, ".agents", "skills", "reviewing-pull-requests")), entry?.computedHash);
  // A name differing from its folder (vercel-react-best-practices in react-best-practices/): the declared one.
  const other = project();
  const vercel = await crowSkills(["add", repoUrl("vercel-agent-skills"), "--skill", "react-best-practices"], {
    cwd: other,
    ...homes(),
  });
  assert.equal(vercel.code, 0, vercel.stderr);
  assert.deepEqual(installed(other), ["vercel-react-best-practices"]);
});

test("install restores the CLI 1.7.4's git lockfile: 46 skills, byte-identical computedHash, fields kept", async () => {
  const dir = project();
  const text = cliGitLock();
  writeFileSync(path.join(dir, "skills-lock.json"), text);
  const run = await crowSkills(["install", "--yes"], { cwd: dir, ...homes() });
  assert.equal(run.code, 0, run.stderr);
  const cli = JSON.parse(text) as { skills: Record<string, Entry> };
  assert.equal(installed(dir).length, 46);
  // Every installed folder hashes to the CLI's computedHash (internal-comms has LICENSE.txt, SKILL.md, examples/:
  // the CLI sorts with localeCompare).
  const lock = lockOf(dir);
  for (const [key, entry] of Object.entries(cli.skills)) {
    const folder = key.toLowerCase().replace(/[^a-z0-9]+/g, "-");
    assert.equal(folderDigest(path.join(dir, ".agents", "skills", folder)), entry.computedHash, key);
    const mine = lock.skills[key];
    assert.ok(mine, `${key} kept its key`);
    for (const field of ["source", "sourceUrl", "sourceType", "skillPath", "computedHash"]) {
      assert.equal(mine[field], entry[field], `${key}.${field}`);
    }
    assert.match(String(mine.resolved), /^[0-9a-f]{40}$/, "Crow's resolved added");
  }
  // list calls none of them changed.
  const list = await crowSkills(["list", "--json"], { cwd: dir, ...homes() });
  const listed = JSON.parse(list.stdout) as { name: string; modified: boolean; valid: boolean }[];
  assert.deepEqual(
    listed.filter((s) => s.modified).map((s) => s.name),
    [],
  );
  assert.ok(
    listed.every((s) => s.valid),
    list.stdout,
  );
});

test("the CLI's local lockfile: relative sources, no skillPath, unknown fields kept; Crow writes sources relative", async () => {
  const dir = project();
  mkdirSync(path.join(dir, "vendor"));
  for (const name of REPOS) cpSync(path.join(ECOSYSTEM, name), path.join(dir, "vendor", name), { recursive: true });
  const cli = JSON.parse(readFileSync(path.join(CLI_LOCKS, "skills-lock.local.json"), "utf8")) as {
    version: number;
    skills: Record<string, Entry>;
  };
  // A field neither tool knows, as a newer CLI might write.
  const withExtra = structuredClone(cli);
  (withExtra.skills["internal-comms"] as Entry).pluginName = "example-skills";
  writeFileSync(path.join(dir, "skills-lock.json"), `${JSON.stringify(withExtra, null, 2)}\n`);
  const run = await crowSkills(["install", "--yes"], { cwd: dir, ...homes() });
  assert.equal(run.code, 0, run.stderr);
  assert.equal(installed(dir).length, 46);
  const lock = lockOf(dir);
  assert.equal(lock.skills["internal-comms"]?.source, "./vendor/anthropics-skills");
  assert.equal(lock.skills["internal-comms"]?.pluginName, "example-skills");
  for (const [key, entry] of Object.entries(cli.skills)) {
    assert.equal(lock.skills[key]?.computedHash, entry.computedHash, key);
    assert.equal(lock.skills[key]?.source, entry.source, key);
  }
  // The CLI's reading rules (its readLocalLock): a number `version` ≥ 1 and a `skills` object; a local source
  // relative to the lockfile. Crow's lockfile keeps both, two-space JSON with a final newline, keys sorted.
  const text = readFileSync(path.join(dir, "skills-lock.json"), "utf8");
  assert.ok(text.endsWith("}\n"));
  assert.deepEqual(Object.keys(lock.skills), Object.keys(lock.skills).sort());
  assert.equal(lock.version, 1);
});

test("an empty skills-lock.json (the sandbox's placeholder) is no lockfile; add writes a real one", async () => {
  const dir = project();
  writeFileSync(path.join(dir, "skills-lock.json"), "");
  const install = await crowSkills(["install"], { cwd: dir, ...homes() });
  assert.equal(install.code, 0, install.stderr);
  assert.match(install.stdout, /no skills locked/);
  const add = await crowSkills(["add", repoUrl("vercel-skills")], { cwd: dir, ...homes() });
  assert.equal(add.code, 0, add.stderr);
  assert.ok(lockOf(dir).skills["find-skills"]);
});

test("list names the sources the CLI's global lock (~/.agents/.skill-lock.json, v3) records", async () => {
  const home = ws.path("home-global");
  mkdirSync(path.join(home, ".agents", "skills"), { recursive: true });
  const lock = readFileSync(path.join(CLI_LOCKS, "global.skill-lock.json"), "utf8");
  writeFileSync(path.join(home, ".agents", ".skill-lock.json"), lock);
  cpSync(
    path.join(ECOSYSTEM, "anthropics-skills", "skills", "internal-comms"),
    path.join(home, ".agents", "skills", "internal-comms"),
    { recursive: true },
  );
  const run = await crowSkills(["list"], { cwd: ws.path("home"), home, crowHome: ws.path("crow-home") });
  assert.equal(run.code, 0, run.stderr);
  assert.match(
    run.stdout,
    /^internal-comms {2}global {2}\/tmp\/skills2\/cli-run\/proj-local\/vendor\/anthropics-skills {2}valid/m,
  );
});

test("a lockfile the CLI rewrote after restoring Crow's: Crow restores it to the same hashes", async () => {
  const dir = project();
  mkdirSync(path.join(dir, "vendor"));
  cpSync(path.join(ECOSYSTEM, "bbrowning-marketplace"), path.join(dir, "vendor", "bbrowning-marketplace"), {
    recursive: true,
  });
  const text = readFileSync(path.join(CLI_LOCKS, "skills-lock.roundtrip.json"), "utf8").replaceAll(
    CLI_REPOS,
    `file://${ws.path("repos")}/`,
  );
  writeFileSync(path.join(dir, "skills-lock.json"), text);
  const run = await crowSkills(["install", "--yes"], { cwd: dir, ...homes() });
  assert.equal(run.code, 0, run.stderr);
  const cli = JSON.parse(text) as { skills: Record<string, Entry> };
  assert.equal(installed(dir).length, 8);
  const mine = lockOf(dir);
  for (const [key, entry] of Object.entries(cli.skills)) {
    assert.equal(mine.skills[key]?.computedHash, entry.computedHash, key);
  }
  assert.equal(
    mine.skills["Reviewing Pull Requests"]?.source,
    "./vendor/bbrowning-marketplace/bbrowning-claude/skills/pr-review",
  );
});
