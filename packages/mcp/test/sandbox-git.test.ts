/**
 * Nothing the sandboxed shell plants in a writable root's git control files runs later, when the user runs git there
 * outside the sandbox: the whole `.git` (a directory, or a worktree's `.git` file and the directories it names) is
 * read-only and cannot be renamed, removed or replaced. Each attack plants a `core.fsmonitor` (run by git status)
 * and checks, with the user's own git on the host, that it did not run. On real bubblewrap.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { callTool, connectStdio, type McpConnection } from "@crow/testkit";

// safe.directory: the unprivileged run's repository belongs to nobody, and this git runs as root.
const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@e", "-c", "safe.directory=*", ...args], {
    cwd,
    encoding: "utf8",
  });

/** A repository with one commit in `dir`. */
function repo(dir: string): void {
  execFileSync("sh", ["-c", "echo hello > README.md"], { cwd: dir });
  git(dir, "init", "-q");
  git(dir, "add", ".");
  git(dir, "commit", "-qm", "first");
}

/** A config that runs `touch marker` on the user's next `git status`. */
const plantedConfig = (marker: string) => `[core]\\n\\tfsmonitor = touch ${marker}; false\\n`;

for (const as of [
  { label: "", uid: undefined },
  ...(process.getuid?.() === 0 ? [{ label: " (as an unprivileged user)", uid: 65534 }] : []),
])
  describe(`sandbox: a writable root's .git is read-only and stays in place${as.label}`, () => {
    let base: string;
    let ws: string;
    let marker: string;
    let mcp: McpConnection;
    const run = async (command: string) => (await callTool(mcp.client, "terminal", { command })).text;

    before(async () => {
      // Outside /tmp: the sandbox's private /tmp would hide the marker's directory.
      base = await mkdtemp(path.join("/var/tmp", "crow-sbx-git-"));
      ws = path.join(base, "ws");
      execFileSync("mkdir", [ws]);
      repo(ws);
      marker = path.join(base, "fsmonitor-ran");
      // Unprivileged: the user owns the files, so only the sandbox stands in the way.
      if (as.uid !== undefined) execFileSync("chown", ["-R", `${as.uid}:${as.uid}`, base]);
      mcp = await connectStdio({
        cwd: ws,
        args: ["--sandbox", "workspace-write"],
        ...(as.uid !== undefined ? { uid: as.uid, gid: as.uid } : {}),
      });
    });
    after(async () => {
      await mcp.close();
      await rm(base, { recursive: true, force: true });
    });

    /** The user's next git command in the workspace, outside the sandbox: it must not run anything planted. */
    function userRunsGit(): void {
      git(ws, "status", "--short");
      assert.equal(existsSync(marker), false, "a planted fsmonitor ran on the user's git status");
      assert.equal(git(ws, "rev-parse", "--absolute-git-dir").trim(), path.join(ws, ".git"));
    }

    test("mv .git, rm -rf .git and replacing .git with a changed copy all fail; a copy elsewhere is allowed", async () => {
      const moved = await run("mv .git .cache-git 2>&1; echo mv=$?");
      assert.match(moved, /mv=1/);
      assert.match(moved, /\[Sandbox: "Device or resource busy" comes from the sandbox too: \.git and/);
      const removed = await run("rm -rf .git 2>&1; echo rm=$?");
      assert.match(removed, /rm=1/);
      const copied = await run("cp -a .git .cache-git && echo copied");
      assert.match(copied, /copied/);
      await run(
        `printf '${plantedConfig(marker)}' >> .cache-git/config; rm -rf .git 2>/dev/null; mv .cache-git .git 2>&1`,
      );
      assert.equal(existsSync(path.join(ws, ".git", "HEAD")), true);
      userRunsGit();
    });

    test(".git/config, .git/commondir and .git/hooks cannot be written", async () => {
      const text = await run(
        [
          `git config core.fsmonitor 'touch ${marker}' 2>&1`,
          `mkdir -p evil/hooks && printf '${plantedConfig(marker)}' > evil/config && echo ../evil > .git/commondir`,
          "echo 'touch x' > .git/hooks/pre-commit",
          "echo done",
        ].join("; "),
      );
      assert.match(text, /Read-only file system/);
      assert.match(text, /done/);
      assert.equal(existsSync(path.join(ws, ".git", "commondir")), false);
      assert.equal(existsSync(path.join(ws, ".git", "hooks", "pre-commit")), false);
      userRunsGit();
      // Reading git still works inside.
      assert.match(await run("git log --oneline"), /first/);
    });

    test("write and edit refuse anything under .git, existing or not", async () => {
      for (const file of [".git/config", ".git/commondir", ".git/hooks/pre-commit", ".git/info/exclude"]) {
        const result = await callTool(mcp.client, "write", { file_path: path.join(ws, file), content: "x" });
        assert.equal(result.isError, true, file);
        assert.match(result.text, /\.git stays read-only in the sandbox/, file);
      }
      userRunsGit();
    });
  });

describe("sandbox: a worktree's .git file and the repository it names are read-only", () => {
  let base: string;
  let shared: string;
  let main: string;
  let wt: string;
  let marker: string;
  let mcp: McpConnection;

  before(async () => {
    base = await mkdtemp(path.join("/var/tmp", "crow-sbx-wt-"));
    // The main repository lies in a second writable root, not at its top: only the worktree's .git names it.
    shared = path.join(base, "shared");
    main = path.join(shared, "main");
    wt = path.join(base, "wt");
    execFileSync("mkdir", ["-p", main]);
    repo(main);
    git(main, "worktree", "add", "-q", wt);
    marker = path.join(base, "fsmonitor-ran");
    mcp = await connectStdio({ cwd: wt });
  });
  after(async () => {
    await mcp.close();
    await rm(base, { recursive: true, force: true });
  });

  test("rewriting the .git file, its gitdir's commondir or the main config fails", async () => {
    const policy = { mode: "workspace-write", writable: [wt, shared], readOnly: [], network: true };
    const result = (await mcp.client.callTool({
      name: "terminal",
      arguments: {
        command: [
          `mkdir -p evil && printf '${plantedConfig(marker)}' > evil/config && mkdir -p evil/refs evil/objects && echo 'ref: refs/heads/x' > evil/HEAD`,
          `echo 'gitdir: ${wt}/evil' > .git 2>&1`,
          "mv .git .git-old 2>&1",
          `echo ${wt}/evil > ${main}/.git/worktrees/wt/commondir 2>&1`,
          `printf '${plantedConfig(marker)}' >> ${main}/.git/config 2>&1`,
          "echo done",
        ].join("; "),
      },
      _meta: { "crow/sandbox": policy },
    })) as { content: Array<{ text?: string }> };
    const text = result.content.map((c) => c.text ?? "").join("");
    assert.match(text, /done/);
    assert.match(text, /Read-only file system/);
    git(wt, "status", "--short");
    assert.equal(existsSync(marker), false, `a planted fsmonitor ran on the user's git status: ${text}`);
    assert.equal(git(wt, "rev-parse", "--git-common-dir").trim(), path.join(main, ".git"));
  });
});
