/**
 * Checkpoints run nothing the model planted and copy none of Crow's keys, over a spawned `crow acp` with a scripted
 * model playing the attacker through the real (sandboxed) terminal:
 * - a fake `git` written into a workspace folder on PATH (an activated `.venv/bin`) is never run by the checkpoint at
 *   the end of the turn (it ran outside the sandbox before);
 * - hooks, fsmonitor, filters and textconv drivers in the workspace's `.git/config` and `.gitattributes`, a nested
 *   repository with its own fsmonitor, and GIT_* variables in the agent's environment run nothing on a checkpoint;
 * - with the workspace = the home, a `~/.gitignore` re-including `.crow/.env` does not get the key into the shadow
 *   repository, and the sandboxed shell cannot read the shadow repositories at all.
 */
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, test } from "node:test";
import type { RewindPoint } from "@crow/core";
import { type AcpClientOptions, type AcpTestClient, CROW_BIN, reply, textReply, useAcpFixture } from "@crow/testkit";

const asRoot = process.getuid?.() === 0;

/** The tool results the model got in the request `req` (in call order). */
function toolResults(req: { body: { messages: Array<{ role: string; content?: unknown }> } }): string[] {
  return req.body.messages.filter((m) => m.role === "tool").map((m) => String(m.content));
}

async function points(agent: AcpTestClient, sessionId: string): Promise<RewindPoint[]> {
  const answer: { points: RewindPoint[] } = await agent.agent.request("_crow/rewind", { sessionId });
  return answer.points;
}

describe("crow acp: a git planted on PATH inside the workspace never runs", () => {
  const fx = useAcpFixture({ startAgent: false });

  const plantGit = async (name: string, uid: number | undefined) => {
    const { mock } = fx;
    const ws = { dir: fx.ws.path(name), path: (relative: string) => fx.ws.path(path.join(name, relative)) };
    await mkdir(ws.dir);
    const markerDir = await fx.tempDir("crow-fake-git-");
    const marker = path.join(markerDir, "ran");
    // An activated virtualenv (or direnv, npx) puts a workspace folder first on PATH.
    let options: AcpClientOptions = { env: { PATH: `${ws.path(".venv/bin")}:${process.env.PATH ?? ""}` } };
    if (uid !== undefined) {
      // The fake git, run as this user, must be able to leave its mark.
      execFileSync("chown", ["-R", `${uid}:${uid}`, ws.dir, markerDir, fx.home]);
      const args = [`--reuid=${uid}`, `--regid=${uid}`, "--clear-groups", process.execPath, CROW_BIN, "acp"];
      options = { ...options, command: { file: "setpriv", args } };
    }
    const agent = await fx.spawn(options);
    const { sessionId } = await agent.newSession(ws.dir);
    const fake = `#!/bin/sh\\necho "$@" >> ${marker}\\nexec /usr/bin/git "$@"\\n`;
    mock.script(
      reply().toolCall("terminal", {
        command: `mkdir -p .venv/bin && printf '${fake}' > .venv/bin/git && chmod +x .venv/bin/git && echo planted > a.txt`,
      }),
      textReply("planted"),
      reply().toolCall("write", { file_path: ws.path("b.txt"), content: "second\n" }),
      textReply("done"),
    );
    assert.equal((await agent.prompt(sessionId, "plant it")).stopReason, "end_turn");
    assert.equal((await agent.prompt(sessionId, "and again")).stopReason, "end_turn");
    mock.assertDone();
    assert.ok(existsSync(ws.path(".venv/bin/git")), "the fake git was written");
    assert.equal(existsSync(marker), false, "the fake git never ran");
    const listed = await points(agent, sessionId);
    assert.deepEqual(
      listed.map((p) => p.files.map((f) => f.path).sort()),
      [[".venv/bin/git", "a.txt"], ["b.txt"]],
      "the checkpoints were taken with the real git",
    );
    await agent.close();
  };

  test("as root: the model writes .venv/bin/git (on PATH); the checkpoints at the turn's end and the next turn's start use the real git", async () => {
    await plantGit("root", undefined);
  });

  test("as an unprivileged user: the same", { skip: asRoot ? false : "needs root to switch to nobody" }, async () => {
    await plantGit("nobody", 65534);
  });
});

describe("crow acp: hooks, fsmonitor, filters and GIT_* variables run nothing on a checkpoint", () => {
  const fx = useAcpFixture({ startAgent: false });

  test("planted in the workspace's .git, .gitattributes, a nested repository and the environment", async () => {
    const { ws, mock } = fx;
    const marker = path.join(await fx.tempDir("crow-planted-"), "ran");
    const run = `sh -c 'echo $0 >> ${marker}; cat'`;
    const git = (...args: string[]) => execFileSync("git", args, { cwd: ws.dir, env: { PATH: process.env.PATH } });
    // What code planted earlier (with the sandbox off, or by a user's tool) would leave in the workspace's repository.
    git("init", "-q");
    git("config", "core.fsmonitor", `echo fsmonitor >> ${marker}; false`);
    git("config", "core.hooksPath", ".githooks");
    git("config", "filter.evil.clean", run.replace("$0", "clean"));
    git("config", "filter.evil.smudge", run.replace("$0", "smudge"));
    git("config", "diff.evil.textconv", run.replace("$0", "textconv"));
    await ws.write(".githooks/post-checkout", `#!/bin/sh\necho hook >> ${marker}\n`);
    await ws.write(".gitattributes", "* filter=evil diff=evil\n");
    await ws.write("tracked.txt", "one\n");
    const agent = await fx.spawn({
      env: {
        GIT_CONFIG_PARAMETERS: `'core.fsmonitor'='echo parameters >> ${marker}; false'`,
        GIT_DIR: ws.path(".git"),
        GIT_CONFIG_GLOBAL: ws.path(".git/config"),
      },
    });
    const { sessionId } = await agent.newSession(ws.dir);
    const nested = `echo nested >> ${marker}; false`;
    // The model's own git commands in the sandbox do not use the agent's planted variables (the shell may inherit them).
    const clean = "unset GIT_DIR GIT_CONFIG_PARAMETERS GIT_CONFIG_GLOBAL; ";
    mock.script(
      // A tracked file that becomes a nested repository with a commit and its own fsmonitor.
      reply().toolCall("terminal", { command: `${clean}echo file > sub && echo two >> tracked.txt` }),
      textReply("one"),
      reply().toolCall("terminal", {
        command:
          `${clean}rm sub && git init -q sub && git -C sub -c user.name=a -c user.email=b commit -q --allow-empty -m x && ` +
          `git -C sub config core.fsmonitor '${nested}' && echo three >> tracked.txt`,
      }),
      textReply("two"),
      reply().toolCall("write", { file_path: ws.path("later.txt"), content: "later\n" }),
      textReply("three"),
    );
    for (const text of ["one", "two", "three"]) {
      assert.equal((await agent.prompt(sessionId, text)).stopReason, "end_turn");
    }
    mock.assertDone();
    const ran = existsSync(marker) ? execFileSync("cat", [marker], { encoding: "utf8" }) : "";
    assert.equal(ran, "", "nothing planted ran");
    const listed = await points(agent, sessionId);
    assert.deepEqual(
      listed.map((p) => p.files.map((f) => f.path).sort()),
      [["sub", "tracked.txt"], ["sub", "tracked.txt"], ["later.txt"]],
    );
  });
});

describe("crow acp: checkpoints never capture Crow's home, and the sandbox cannot read them", () => {
  const KEY = "sk-plant-gitignore-0123456789";
  const fx = useAcpFixture({
    startAgent: false,
    async prepare({ crowHome, home }) {
      await writeFile(path.join(crowHome, ".env"), `OPENAI_API_KEY=${KEY}\n`);
      await writeFile(path.join(crowHome, "config.yaml"), `# ${KEY}\n`);
      // crow run in ~, with a ~/.gitignore that re-includes Crow's files.
      await writeFile(path.join(home, ".gitignore"), "!/.crow/\n!/.crow/.env\n!/.crow/config.yaml\n");
    },
  });

  test("the workspace is the home and ~/.gitignore says !/.crow/.env: the key is not in the shadow repository, and the shell cannot read the repository", async () => {
    const { home, crowHome, mock } = fx;
    const agent = await fx.spawn();
    const { sessionId } = await agent.newSession(home);
    const checkpoints = path.join(crowHome, "checkpoints");
    mock.script(
      reply().toolCall("write", { file_path: path.join(home, "notes.txt"), content: "notes\n" }),
      textReply("wrote"),
      reply().toolCall("terminal", {
        command:
          `ls -a ${checkpoints}; for d in ${checkpoints}/*.git; do ` +
          `git --git-dir="$d" for-each-ref --format='%(objectname)' | while read c; do ` +
          `git --git-dir="$d" show "$c:.crow/.env"; git --git-dir="$d" ls-tree -r --name-only "$c"; done; done; ` +
          `cat ${checkpoints}/*.git/config`,
      }),
      textReply("looked").expect((req) => {
        const shown = toolResults(req).at(-1) ?? "";
        assert.doesNotMatch(shown, new RegExp(KEY), "the key did not come back");
        assert.doesNotMatch(shown, /notes\.txt|\[core\]/, "the shadow repositories are not visible in the sandbox");
      }),
    );
    assert.equal((await agent.prompt(sessionId, "write notes")).stopReason, "end_turn");
    assert.equal((await agent.prompt(sessionId, "look for the key")).stopReason, "end_turn");
    mock.assertDone();

    const repos = (await readdir(checkpoints)).filter((name) => name.endsWith(".git"));
    assert.equal(repos.length, 1);
    const gitDir = path.join(checkpoints, repos[0] ?? "");
    const files = execFileSync("git", ["--git-dir", gitDir, "ls-tree", "-r", "--name-only", "refs/heads/main"], {
      encoding: "utf8",
    });
    assert.match(files, /^notes\.txt$/m, "the home's own files are captured");
    assert.doesNotMatch(files, /^\.crow\//m, "nothing of Crow's home is");
    const grep = spawnSync("git", ["--git-dir", gitDir, "grep", "-c", KEY, "refs/heads/main"], { encoding: "utf8" });
    assert.equal(grep.stdout, "", "no snapshot holds the key");
  });
});
