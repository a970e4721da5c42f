/**
 * The lookup of the sandbox's own programs on PATH: entries that are relative or in the working directory (where a
 * command may have written a fake `bwrap`) are skipped, links into the working directory too; a working directory of
 * `/` does not exclude everything; with only a planted bwrap on PATH the sandbox is unavailable and says why.
 */
import assert from "node:assert/strict";
import { chmod, mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { after, afterEach, before, describe, test } from "node:test";
import { resetSandboxAvailability, sandboxAvailability, useBwrapProgram } from "@crow/mcp/sandbox";
import { findOnPath, trustedExecutable } from "../src/sandbox/which.js";

describe("sandbox: the trusted lookup of bwrap and bash", () => {
  const saved = { cwd: process.cwd(), path: process.env.PATH };
  let ws: string;
  let links: string;

  before(async () => {
    ws = await mkdtemp(path.join("/var/tmp", "crow-which-"));
    await mkdir(path.join(ws, ".venv", "bin"), { recursive: true });
    await writeFile(path.join(ws, ".venv", "bin", "bwrap"), "#!/bin/sh\nexit 0\n");
    await chmod(path.join(ws, ".venv", "bin", "bwrap"), 0o755);
    // A directory outside whose `bwrap` is a link to the workspace's.
    links = await mkdtemp(path.join("/var/tmp", "crow-which-links-"));
    await symlink(path.join(ws, ".venv", "bin", "bwrap"), path.join(links, "bwrap"));
    useBwrapProgram(undefined); // `bwrap`, looked up on PATH
  });
  afterEach(() => {
    process.chdir(saved.cwd);
    process.env.PATH = saved.path;
    resetSandboxAvailability();
  });
  after(async () => {
    await rm(ws, { recursive: true, force: true });
    await rm(links, { recursive: true, force: true });
  });

  test("a bwrap in the working directory, behind a relative entry or a link into it, is skipped", () => {
    process.chdir(ws);
    const searchPath = [path.join(ws, ".venv", "bin"), ".venv/bin", links, "/usr/bin", "/bin"].join(":");
    assert.equal(findOnPath("bwrap", [], searchPath), path.join(ws, ".venv", "bin", "bwrap"));
    process.env.PATH = searchPath;
    assert.equal(trustedExecutable("bwrap"), "/usr/bin/bwrap");
    // /tmp excluded for the bash run inside (the sandbox's /tmp is a private one).
    assert.match(trustedExecutable("bash", ["/tmp"]) ?? "", /^\/(usr\/)?bin\/bash$/);
  });

  test("a working directory of / excludes nothing", () => {
    process.chdir("/");
    process.env.PATH = "/usr/bin:/bin";
    assert.equal(trustedExecutable("bwrap"), "/usr/bin/bwrap");
  });

  test("only a planted bwrap on PATH: unavailable, naming it and what to do", () => {
    process.chdir(ws);
    process.env.PATH = `${path.join(ws, ".venv", "bin")}:/bin/nonexistent`;
    const available = sandboxAvailability();
    assert.equal(available.ok, false);
    assert.match(
      available.ok ? "" : available.reason,
      new RegExp(`the only bwrap on PATH is ${ws}/\\.venv/bin/bwrap, in the working directory.*CROW_BWRAP`),
    );
  });
});
