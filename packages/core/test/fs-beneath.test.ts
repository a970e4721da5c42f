/**
 * The descriptor-based file operations of fs-beneath.ts (rewind's restore, AGENTS.md) and Crow's git lookup, on real
 * files: nothing is written, deleted or read through a link that leads out of the directory, a FIFO never holds a read
 * up, and a git in an untrusted PATH entry is never chosen.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { chmod, lstat, mkdir, mkdtemp, readFile, readlink, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { findGit } from "../src/checkpoints/git.js";
import { putBeneath, readInside, removeBeneath } from "../src/fs-beneath.js";
import { readAgentsMd } from "../src/prompt/system-prompt.js";

let dir: string;
let ws: string;
let victim: string;
before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "crow-beneath-"));
  ws = path.join(dir, "ws");
  victim = path.join(dir, "victim");
  await mkdir(ws);
  await mkdir(victim);
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

test("removeBeneath never deletes through a linked directory; putBeneath replaces a link, never writes through it", async () => {
  await writeFile(path.join(victim, "data.txt"), "victim\n");
  await symlink(victim, path.join(ws, "d"));
  assert.equal(await removeBeneath(ws, "d/data.txt"), false, "the path leads through a link: not there");
  assert.equal(await readFile(path.join(victim, "data.txt"), "utf8"), "victim\n");

  // A link at the name itself is replaced by the file.
  await symlink(path.join(victim, "data.txt"), path.join(ws, "f.txt"));
  await putBeneath(ws, "f.txt", Buffer.from("restored\n"));
  assert.equal(await readFile(path.join(victim, "data.txt"), "utf8"), "victim\n");
  assert.equal((await lstat(path.join(ws, "f.txt"))).isFile(), true);
  // A linked directory on the way is replaced by a real one (as a checkout does), the victim left alone.
  await putBeneath(ws, "d/data.txt", Buffer.from("restored\n"), { executable: true });
  assert.equal(await readFile(path.join(victim, "data.txt"), "utf8"), "victim\n");
  assert.equal(await readFile(path.join(ws, "d", "data.txt"), "utf8"), "restored\n");
  assert.equal(((await lstat(path.join(ws, "d", "data.txt"))).mode & 0o100) !== 0, true, "executable");
  await putBeneath(ws, "n/e/w/link", Buffer.from("../target"), { link: true });
  assert.equal(await readlink(path.join(ws, "n/e/w/link")), "../target");
  assert.equal(await removeBeneath(ws, "n/e/w/link"), true);
});

test("readInside: a link inside is read; /proc/self/environ, a file outside and a FIFO are refused without blocking", async () => {
  await writeFile(path.join(ws, "guide.md"), "inside\n");
  await symlink("guide.md", path.join(ws, "inner"));
  await symlink("/proc/self/environ", path.join(ws, "environ"));
  await symlink(path.join(victim, "data.txt"), path.join(ws, "outer"));
  execFileSync("mkfifo", [path.join(ws, "fifo")]);
  const text = (read: Awaited<ReturnType<typeof readInside>>) =>
    read && ("bytes" in read ? read.bytes.toString("utf8") : read.refused);
  assert.equal(text(await readInside(ws, path.join(ws, "inner"), 100)), "inside\n");
  assert.equal(text(await readInside(ws, path.join(ws, "inner"), 3)), "ins", "capped");
  assert.match(text(await readInside(ws, path.join(ws, "environ"), 100)) ?? "", /leads outside .*\/proc\/\d+\/environ/);
  assert.match(text(await readInside(ws, path.join(ws, "outer"), 100)) ?? "", /leads outside/);
  assert.match(text(await readInside(ws, path.join(ws, "fifo"), 100)) ?? "", /not a regular file/);
  assert.equal(await readInside(ws, path.join(ws, "missing"), 100), undefined);

  const agents = path.join(dir, "agents");
  await mkdir(agents);
  execFileSync("mkfifo", [path.join(agents, "AGENTS.md")]);
  assert.match((await readAgentsMd(agents)) ?? "", /AGENTS\.md was left out: it is not a regular file/);
});

test("findGit skips relative PATH entries and entries inside the untrusted directories, and says so when nothing is left", async () => {
  const bin = path.join(ws, ".venv", "bin");
  await mkdir(bin, { recursive: true });
  await writeFile(path.join(bin, "git"), "#!/bin/sh\nexit 0\n");
  await chmod(path.join(bin, "git"), 0o755);
  const system = execFileSync("sh", ["-c", "command -v git"], { encoding: "utf8" }).trim();
  const searchPath = [".venv/bin", bin, path.dirname(system)].join(path.delimiter);
  const git = findGit([ws], searchPath);
  assert.notEqual(path.dirname(git.file), bin);
  assert.equal(git.searchPath, path.dirname(system), "PATH for git keeps the trusted entries only");
  assert.throws(() => findGit([ws], `.:${bin}:/nonexistent`), /git was not found on PATH outside the workspace/);
});
