/**
 * The shadow repository on its own (real git, real files): byte-exact snapshots and restores of content, modes,
 * deletions and symlinks, a user's .gitattributes filters not applied, and the refusal of a snapshot that would copy
 * too many files at once (a home directory).
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmod, link, mkdir, mkdtemp, readFile, readlink, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { ShadowRepo } from "../src/checkpoints/shadow-repo.js";

let dir: string;
before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "crow-shadow-"));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

test("snapshot and restore are byte-exact: CRLF, binary, modes, symlinks, deletions; .gitattributes filters are not applied", async () => {
  const ws = path.join(dir, "exact");
  await mkdir(ws);
  await writeFile(path.join(ws, ".gitattributes"), "* text=auto eol=lf\n*.txt filter=lfs\n");
  await writeFile(path.join(ws, "crlf.txt"), "one\r\ntwo\r\n");
  const blob = randomBytes(2048);
  await writeFile(path.join(ws, "blob.bin"), blob);
  await writeFile(path.join(ws, "tool.sh"), "#!/bin/sh\n");
  await chmod(path.join(ws, "tool.sh"), 0o755);
  await symlink("crlf.txt", path.join(ws, "link"));
  const repo = new ShadowRepo(path.join(dir, "exact.git"), ws, 1024 * 1024);
  const before = await repo.snapshot();
  assert.equal(before.reused, false);
  assert.equal((await repo.snapshot()).reused, true, "nothing changed: the same commit, nothing written");

  await writeFile(path.join(ws, "crlf.txt"), "changed\n");
  await writeFile(path.join(ws, "blob.bin"), "text now");
  await chmod(path.join(ws, "tool.sh"), 0o644);
  await rm(path.join(ws, "link"));
  await writeFile(path.join(ws, "extra.txt"), "new\n");
  const after = await repo.snapshot();
  const changed = (await repo.changes(before.commit, after.commit)).map((c) => `${c.status} ${c.path}`).sort();
  assert.deepEqual(changed, ["A extra.txt", "D link", "M blob.bin", "M crlf.txt", "M tool.sh"]);

  await repo.restore(
    before.commit,
    changed.map((c) => c.slice(2)),
  );
  assert.equal(await readFile(path.join(ws, "crlf.txt"), "utf8"), "one\r\ntwo\r\n");
  assert.deepEqual(await readFile(path.join(ws, "blob.bin")), blob);
  assert.equal((await stat(path.join(ws, "tool.sh"))).mode & 0o777, 0o755);
  assert.equal(await readlink(path.join(ws, "link")), "crlf.txt");
  await assert.rejects(stat(path.join(ws, "extra.txt")), { code: "ENOENT" });
});

test("a snapshot that would copy more files at once than the cap is refused with what to do", async () => {
  const ws = path.join(dir, "big");
  await mkdir(ws);
  for (let i = 0; i < 12; i++) await writeFile(path.join(ws, `f${i}.txt`), `${i}\n`);
  const repo = new ShadowRepo(path.join(dir, "big.git"), ws, 1024 * 1024, 10);
  await assert.rejects(
    repo.snapshot(),
    /12 files not yet captured \(more than 10\).*\.gitignore.*checkpoints\.enabled/,
  );
  await writeFile(path.join(ws, ".gitignore"), "f1*.txt\n");
  const snapshot = await repo.snapshot();
  assert.equal(snapshot.reused, false, "with the bulk ignored, it is taken");
});

test("a Crow home inside the workspace is not captured (nor, when the workspace is the home, the repositories)", async () => {
  const ws = path.join(dir, "home-inside");
  await mkdir(path.join(ws, ".crow"), { recursive: true });
  await writeFile(path.join(ws, ".crow", "crow.db"), "store");
  await writeFile(path.join(ws, "work.txt"), "work\n");
  const inHome = new ShadowRepo(path.join(ws, ".crow", "checkpoints", "ws.git"), ws, 1024 * 1024);
  const first = await inHome.snapshot();
  await writeFile(path.join(ws, ".crow", "crow.db"), "store changed");
  await writeFile(path.join(ws, "later.txt"), "later\n");
  const second = await inHome.snapshot();
  assert.deepEqual(
    (await inHome.changes(first.commit, second.commit)).map((c) => c.path),
    ["later.txt"],
  );

  const home = path.join(dir, "home-is-ws");
  await mkdir(home);
  await writeFile(path.join(home, "crow.db"), "store");
  const isHome = new ShadowRepo(path.join(home, "checkpoints", "ws.git"), home, 1024 * 1024);
  const a = await isHome.snapshot();
  await writeFile(path.join(home, "crow.db"), "store changed");
  const b = await isHome.snapshot();
  assert.deepEqual(
    (await isHome.changes(a.commit, b.commit)).map((c) => c.path),
    ["crow.db"],
    "the repositories themselves never are",
  );
});

test("a snapshot that wrote a thousand files or more is packed by packIfDue (a no-op otherwise)", async () => {
  const ws = path.join(dir, "many");
  await mkdir(ws);
  for (let i = 0; i < 1000; i++) await writeFile(path.join(ws, `f${i}.txt`), `file ${i}\n`);
  const gitDir = path.join(dir, "many.git");
  const repo = new ShadowRepo(gitDir, ws, 1024 * 1024);
  await repo.snapshot();
  const objects = () => execFileSync("git", ["--git-dir", gitDir, "count-objects", "-v"], { encoding: "utf8" });
  assert.match(objects(), /^count: [1-9]\d{3}/m, "loose after the snapshot");
  await repo.packIfDue();
  assert.match(objects(), /^count: 0$/m);
  assert.match(objects(), /^in-pack: [1-9]\d{3}/m);
  await writeFile(path.join(ws, "f1.txt"), "changed\n");
  await repo.snapshot();
  await repo.packIfDue();
  assert.match(objects(), /^count: [1-9]$/m, "a small snapshot stays loose until the gc");
});

test("Crow's home and secret files are never captured, whatever a .gitignore re-includes, nor a hard link to .env", async () => {
  const home = path.join(dir, "user-home");
  const crow = path.join(home, ".crow");
  await mkdir(crow, { recursive: true });
  await writeFile(path.join(crow, ".env"), "OPENAI_API_KEY=sk-never-captured\n");
  await writeFile(path.join(crow, "config.yaml"), "model: x\n");
  await writeFile(path.join(home, ".gitignore"), "!/.crow/\n!/.crow/.env\n!/.crow/config.yaml\n");
  await writeFile(path.join(home, "notes.txt"), "notes\n");
  await link(path.join(crow, ".env"), path.join(home, "innocent.txt"));
  const repo = new ShadowRepo(path.join(crow, "checkpoints", "home.git"), home, 1024 * 1024);
  const snapshot = await repo.snapshot();
  const files = execFileSync(
    "git",
    ["--git-dir", path.join(crow, "checkpoints", "home.git"), "ls-tree", "-r", "--name-only", snapshot.commit],
    { encoding: "utf8" },
  );
  assert.deepEqual(files.trim().split("\n").sort(), [".gitignore", "notes.txt"]);

  // The workspace is the home itself: everything is captured but the repositories and the secret files.
  await writeFile(path.join(crow, "crow.db"), "store");
  const inside = new ShadowRepo(path.join(crow, "checkpoints", "crow.git"), crow, 1024 * 1024);
  const own = await inside.snapshot();
  const kept = execFileSync(
    "git",
    ["--git-dir", path.join(crow, "checkpoints", "crow.git"), "ls-tree", "-r", "--name-only", own.commit],
    { encoding: "utf8" },
  );
  assert.deepEqual(kept.trim().split("\n"), ["crow.db"]);
});
