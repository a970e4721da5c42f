/**
 * The terminal's shell and the write/edit tools under real bubblewrap (`crow-mcp --sandbox …`). These tests need
 * bwrap: CI installs it (.ci/run); a machine without it fails here rather than skipping, since a skipped sandbox test
 * proves nothing.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { callTool, connectStdio, type McpConnection, type TempWorkspace, tempWorkspace } from "@crow/testkit";

/** A directory outside /tmp (the sandbox gives the shell a private /tmp, which would hide a /tmp path entirely). */
async function outsideDir(prefix: string): Promise<string> {
  return mkdtemp(path.join("/var/tmp", prefix));
}

/** The exit code a terminal result reports in its structured content (its text names only a failure's). */
function exitCode(result: { structuredContent?: unknown }): number | undefined {
  return (result.structuredContent as { exit_code?: number } | undefined)?.exit_code;
}

async function gitRepo(ws: TempWorkspace): Promise<void> {
  await ws.write("README.md", "hello\n");
  await ws.write("t.test.mjs", 'import test from "node:test";\ntest("passes", () => {});\n');
  const { execFileSync } = await import("node:child_process");
  const git = (...args: string[]) =>
    execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@e", ...args], { cwd: ws.dir });
  git("init", "-q");
  git("add", ".");
  git("commit", "-qm", "first commit");
}

describe("sandbox workspace-write: the shell and write/edit may change only the workspace", () => {
  let ws: TempWorkspace;
  let outside: string;
  let home: string;
  let mcp: McpConnection;
  const run = (command: string) => callTool(mcp.client, "terminal", { command });

  before(async () => {
    ws = await tempWorkspace("crow-sbx-");
    await gitRepo(ws);
    outside = await outsideDir("crow-sbx-outside-");
    home = await outsideDir("crow-sbx-home-");
    await writeFile(path.join(outside, "target.txt"), "original\n");
    await symlink(outside, ws.path("link-out"));
    mcp = await connectStdio({ cwd: ws.dir, args: ["--sandbox", "workspace-write"], env: { HOME: home } });
  });
  after(async () => {
    await mcp.close();
    await ws.cleanup();
    await rm(outside, { recursive: true, force: true });
    await rm(home, { recursive: true, force: true });
  });

  test("a write in the workspace succeeds", async () => {
    const result = await run("echo made > made.txt && mkdir -p sub && cp made.txt sub/copy.txt && cat sub/copy.txt");
    assert.equal(result.text, "made");
    assert.equal(exitCode(result), 0);
    assert.equal(await ws.read("sub/copy.txt"), "made\n");
  });

  test("writes to /etc, $HOME and another directory fail, and the result says the sandbox blocked them", async () => {
    for (const target of ["/etc/crow-sandbox-test", "$HOME/crow-sandbox-test", `${outside}/new.txt`]) {
      const result = await run(`echo x > ${target}`);
      assert.match(result.text, /Read-only file system/, target);
      assert.match(result.text, /\[Sandbox: writing \/.* was blocked/, target);
      assert.match(result.text, new RegExp(`may write only in ${ws.dir}`), target);
      assert.match(result.text, /exit code 1/);
    }
    assert.equal(existsSync("/etc/crow-sandbox-test"), false);
    assert.equal(existsSync(path.join(home, "crow-sandbox-test")), false);
    assert.equal(existsSync(path.join(outside, "new.txt")), false);
  });

  test("a repository without .git/hooks cannot get one: the whole .git is read-only", async () => {
    const repo = await tempWorkspace("crow-sbx-nohooks-");
    await gitRepo(repo);
    await rm(repo.path(".git/hooks"), { recursive: true, force: true });
    const other = await connectStdio({ cwd: repo.dir, args: ["--sandbox", "workspace-write"] });
    try {
      const result = await callTool(other.client, "terminal", {
        command: "mkdir -p .git/hooks && echo 'curl evil' > .git/hooks/pre-commit",
      });
      assert.match(result.text, /Read-only file system/);
      assert.equal(existsSync(repo.path(".git/hooks/pre-commit")), false);
    } finally {
      await other.close();
      await repo.cleanup();
    }
  });

  test(".git/hooks and .git/config stay read-only inside the workspace, and so does a commit", async () => {
    const hook = await run("echo 'curl evil' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit");
    assert.match(hook.text, /Read-only file system/);
    const config = await run("git config core.hooksPath /var/tmp/evil-hooks");
    assert.notEqual(exitCode(config), 0);
    assert.match(config.text, /\[Command failed with exit code \d+\]$/);
    assert.equal(existsSync(ws.path(".git/hooks/pre-commit")), false);
    assert.doesNotMatch(await readFile(ws.path(".git/config"), "utf8"), /hooksPath/);
    // Reading git still runs; a commit needs .git written, which is the user's (see sandbox-git.test.ts).
    const status = await run("echo more >> README.md && git status --short README.md && git diff --stat | tail -1");
    assert.match(status.text, /^ M README.md\n 1 file changed, 1 insertion/);
    const commit = await run("git -c user.name=t -c user.email=t@e commit -qam second");
    assert.match(commit.text, /Read-only file system/);
    assert.match(commit.text, /\.git stays read-only/);
  });

  test("a workspace symlink to an outside directory cannot be written through, by the shell or by the tools", async () => {
    const shell = await run("echo changed > link-out/target.txt; echo new > link-out/new.txt");
    assert.match(shell.text, /Read-only file system/);
    const written = await callTool(mcp.client, "write", { file_path: ws.path("link-out/new.txt"), content: "x" });
    assert.equal(written.isError, true);
    assert.match(written.text, /outside the sandbox's writable directories/);
    assert.match(written.text, new RegExp(`really ${outside}/new.txt`));
    const edited = await callTool(mcp.client, "edit", {
      file_path: ws.path("link-out/target.txt"),
      old_string: "original",
      new_string: "changed",
    });
    assert.equal(edited.isError, true);
    assert.match(edited.text, /outside the sandbox's writable directories/);
    assert.equal(await readFile(path.join(outside, "target.txt"), "utf8"), "original\n");
    assert.equal(existsSync(path.join(outside, "new.txt")), false);
  });

  test("write and edit refuse anything in .git (even .git/hooks that does not exist yet) and succeed in the workspace", async () => {
    const hook = await callTool(mcp.client, "write", { file_path: ws.path(".git/hooks/post-checkout"), content: "x" });
    assert.equal(hook.isError, true);
    assert.match(hook.text, /stays read-only in the sandbox/);
    // The whole of .git, and .git itself: commondir, info/ or a replaced .git would run code outside later too.
    for (const file of [".git/commondir", ".git/info/attributes", ".git/objects/new/x", ".git"]) {
      const blocked = await callTool(mcp.client, "write", { file_path: ws.path(file), content: "x" });
      assert.equal(blocked.isError, true, file);
      assert.match(blocked.text, /\.git stays read-only in the sandbox/, file);
    }
    assert.equal(existsSync(ws.path(".git/commondir")), false);
    const ok = await callTool(mcp.client, "write", { file_path: ws.path("notes/todo.md"), content: "a\n" });
    assert.equal(ok.isError, undefined);
    const edit = await callTool(mcp.client, "edit", {
      file_path: ws.path("notes/todo.md"),
      old_string: "a",
      new_string: "b",
    });
    assert.equal(edit.isError, undefined);
    assert.equal(await ws.read("notes/todo.md"), "b\n");
  });

  test("host processes are invisible and cannot be signalled", async () => {
    const result = await run(`ls /proc | grep -c '^[0-9]'; kill -0 ${process.pid} && echo SIGNALLED`);
    const count = Number(result.text.split("\n")[0]);
    assert.ok(count > 0 && count < 10, `the shell sees ${count} processes`);
    assert.doesNotMatch(result.text, /SIGNALLED/);
    assert.match(result.text, /No such process/);
  });

  test("job control still works inside: a hard timeout interrupts the command and the shell stays usable", async () => {
    const timed = await callTool(mcp.client, "terminal", { command: "sleep 30", timeout: 1 });
    assert.match(timed.text, /timed out after 1s: interrupted it with SIGINT/);
    const after = await run("echo still here");
    assert.match(after.text, /^still here$/);
    // A program waiting for input is seen as such (the /proc probe finds bash's job inside the PID namespace).
    const asking = await run("read -p 'name? ' who; echo \"hello $who\"");
    assert.match(asking.text, /waiting for input/);
    const answered = await callTool(mcp.client, "terminal", { command: "crow", is_input: true });
    assert.match(answered.text, /hello crow/);
  });
});

describe("sandbox read-only: commands run, nothing is written", () => {
  let ws: TempWorkspace;
  let mcp: McpConnection;
  const run = (command: string) => callTool(mcp.client, "terminal", { command });

  before(async () => {
    ws = await tempWorkspace("crow-sbx-ro-");
    await gitRepo(ws);
    mcp = await connectStdio({ cwd: ws.dir, args: ["--sandbox", "read-only"] });
  });
  after(async () => {
    await mcp.close();
    await ws.cleanup();
  });

  test("git log and a test run work", async () => {
    const log = await run("git log --oneline");
    assert.match(log.text, /first commit/);
    assert.equal(exitCode(log), 0);
    // (NODE_TEST_CONTEXT comes from this test's own runner; a user's shell has none.)
    const tests = await run("env -u NODE_TEST_CONTEXT node --test t.test.mjs");
    assert.match(tests.text, /pass 1\n/);
    assert.equal(exitCode(tests), 0);
  });

  test("redirects, python, cp, sed -i, write and edit all fail", async () => {
    for (const command of [
      "echo x > new.txt",
      "echo x >> README.md",
      `python3 -c "open('new.txt','w')"`,
      "cp README.md copy.md",
      "sed -i s/hello/bye/ README.md",
    ]) {
      const result = await run(command);
      assert.match(result.text, /Read-only file system|read-only file system/, command);
      assert.match(result.text, /this session is read-only/, command);
    }
    const written = await callTool(mcp.client, "write", { file_path: ws.path("new.txt"), content: "x" });
    assert.equal(written.isError, true);
    assert.match(written.text, /this session is read-only/);
    const edited = await callTool(mcp.client, "edit", {
      file_path: ws.path("README.md"),
      old_string: "hello",
      new_string: "bye",
    });
    assert.equal(edited.isError, true);
    assert.equal(await ws.read("README.md"), "hello\n");
    assert.equal(existsSync(ws.path("new.txt")), false);
    assert.equal(existsSync(ws.path("copy.md")), false);
  });

  test("the private /tmp is writable", async () => {
    const result = await run("echo scratch > /tmp/scratch && cat /tmp/scratch");
    assert.match(result.text, /^scratch$/);
  });
});

describe("sandbox network", () => {
  let ws: TempWorkspace;
  let listener: Server;
  let port = 0;

  before(async () => {
    ws = await tempWorkspace("crow-sbx-net-");
    listener = createServer((socket) => socket.end("hello from the host\n"));
    await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
    port = (listener.address() as { port: number }).port;
  });
  after(async () => {
    listener.close();
    await ws.cleanup();
  });

  const probe = () => `exec 3<>/dev/tcp/127.0.0.1/${port} && head -1 <&3 || echo UNREACHABLE`;

  test("off: a loopback listener on the host is unreachable from the shell, and the result says why", async () => {
    const mcp = await connectStdio({ cwd: ws.dir, args: ["--sandbox", "read-only"] });
    try {
      const result = await callTool(mcp.client, "terminal", { command: probe() });
      assert.match(result.text, /UNREACHABLE/);
      assert.doesNotMatch(result.text, /hello from the host/);
      assert.match(result.text, /\[Sandbox: the network is off for commands in this session/);
    } finally {
      await mcp.close();
    }
  });

  test("on: the same listener answers (the check above is not vacuous)", async () => {
    const mcp = await connectStdio({ cwd: ws.dir, args: ["--sandbox", "workspace-write"] });
    try {
      const result = await callTool(mcp.client, "terminal", { command: probe() });
      assert.match(result.text, /hello from the host/);
    } finally {
      await mcp.close();
    }
  });
});

describe("sandbox policy per call (a mode change)", () => {
  test("a call carrying another policy restarts the shell under it and says so", async () => {
    const ws = await tempWorkspace("crow-sbx-meta-");
    const mcp = await connectStdio({ cwd: ws.dir, args: ["--sandbox", "workspace-write"] });
    try {
      const first = await callTool(mcp.client, "terminal", { command: "echo 1 > one.txt && export KEPT=yes" });
      assert.equal(first.text, "(no output)");
      assert.equal(exitCode(first), 0);
      const readOnly = { mode: "read-only", writable: [], readOnly: [], network: false };
      const switched = (await mcp.client.callTool({
        name: "terminal",
        arguments: { command: 'echo "[$KEPT]"; echo 2 > two.txt' },
        _meta: { "crow/sandbox": readOnly },
      })) as { content: Array<{ text: string }> };
      const text = switched.content.map((c) => c.text).join("");
      assert.match(text, /The session's sandbox changed, so a new shell was started/);
      assert.match(text, /\[\]\n/);
      assert.match(text, /Read-only file system/);
      assert.equal(existsSync(ws.path("two.txt")), false);
      // write follows the latest policy too.
      const written = await callTool(mcp.client, "write", { file_path: ws.path("three.txt"), content: "x" });
      assert.equal(written.isError, true);
      const bad = (await mcp.client.callTool({
        name: "terminal",
        arguments: { command: "true" },
        _meta: { "crow/sandbox": { mode: "everything" } },
      })) as { isError?: boolean; content: Array<{ text: string }> };
      assert.equal(bad.isError, true);
      assert.match(bad.content[0]?.text ?? "", /invalid _meta\["crow\/sandbox"\]: sandbox mode must be/);
    } finally {
      await mcp.close();
      await ws.cleanup();
    }
  });
});

describe("sandbox hidden files", () => {
  test("Crow's .env and config.yaml (the policy's hidden paths) cannot be read from the shell", async () => {
    const ws = await tempWorkspace("crow-sbx-hidden-");
    const crowHome = await outsideDir("crow-sbx-crowhome-");
    await writeFile(path.join(crowHome, ".env"), "OPENAI_API_KEY=sk-hidden-secret\n");
    await writeFile(path.join(crowHome, "config.yaml"), "providers: {}\n");
    await writeFile(path.join(crowHome, "other.txt"), "visible\n");
    const mcp = await connectStdio({ cwd: ws.dir });
    try {
      const policy = {
        mode: "workspace-write",
        writable: [ws.dir],
        readOnly: [],
        network: true,
        hidden: [path.join(crowHome, ".env"), path.join(crowHome, "config.yaml")],
      };
      const result = (await mcp.client.callTool({
        name: "terminal",
        arguments: { command: `cat ${crowHome}/.env ${crowHome}/config.yaml ${crowHome}/other.txt` },
        _meta: { "crow/sandbox": policy },
      })) as { content: Array<{ text: string }> };
      const text = result.content.map((c) => c.text).join("");
      assert.doesNotMatch(text, /sk-hidden-secret|providers/);
      assert.match(text, /\.env: Permission denied\n.*config\.yaml: Permission denied\nvisible\n/);
    } finally {
      await mcp.close();
      await ws.cleanup();
      await rm(crowHome, { recursive: true, force: true });
    }
  });
});

describe("sandbox: a hidden directory that holds the workspace", () => {
  // What `crow eval` asks when TMPDIR is not under /tmp: the host's temporary directory hidden (other trials'
  // workspaces, a suite copied there), the trial's workspace inside it shown. Before, the directory was emptied after
  // the workspace was bound, so the shell lost its own workspace, and a hidden path inside it stopped bwrap.
  test("the workspace stays the shell's; the rest of the directory, and what is hidden inside it, is not there", async () => {
    const outer = await outsideDir("crow-sbx-holding-");
    const ws = path.join(outer, "trial", "app");
    await mkdir(ws, { recursive: true });
    await mkdir(path.join(outer, "other-trial", "tests"), { recursive: true });
    await writeFile(path.join(outer, "other-trial", "tests", "solve.sh"), "echo the-answer\n");
    await mkdir(path.join(outer, "crow-home"));
    await writeFile(path.join(outer, "crow-home", "crow.db"), "transcripts\n");
    const mcp = await connectStdio({ cwd: ws });
    try {
      const policy = {
        mode: "workspace-write",
        writable: [ws],
        readOnly: [],
        network: false,
        hidden: [outer, path.join(outer, "crow-home", "crow.db")],
      };
      const result = (await mcp.client.callTool({
        name: "terminal",
        arguments: {
          command: `echo mine > ${ws}/made.txt && cat ${ws}/made.txt; ls -A ${outer}; cat ${outer}/other-trial/tests/solve.sh ${outer}/crow-home/crow.db 2>&1 | grep -c 'No such file'`,
        },
        _meta: { "crow/sandbox": policy },
      })) as { content: Array<{ text: string }> };
      const text = result.content.map((c) => c.text).join("");
      assert.doesNotMatch(text, /the-answer|transcripts|other-trial|crow-home/);
      assert.equal(text, "mine\ntrial\n2");
    } finally {
      await mcp.close();
      await rm(outer, { recursive: true, force: true });
    }
  });
});

describe("sandbox environment", () => {
  test("provider keys do not reach the sandboxed shell, also after cd /, in bash -c, env -i and subshells", async () => {
    const ws = await tempWorkspace("crow-sbx-env-");
    const mcp = await connectStdio({
      cwd: ws.dir,
      args: ["--sandbox", "workspace-write"],
      env: { OPENAI_API_KEY: "sk-crow-test-secret" },
    });
    try {
      const result = await callTool(mcp.client, "terminal", {
        command: `echo "[$OPENAI_API_KEY]"; cd /; echo "[$OPENAI_API_KEY]"; bash -c 'echo "[$OPENAI_API_KEY]"'; env -i bash -c 'echo "[$OPENAI_API_KEY]"'; (echo "[$OPENAI_API_KEY]"); cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n' | grep -c sk-crow-test-secret`,
      });
      assert.doesNotMatch(result.text, /sk-crow-test-secret/);
      assert.match(result.text, /^\[\]\n\[\]\n\[\]\n\[\]\n\[\]\n0\n/);
    } finally {
      await mcp.close();
      await ws.cleanup();
    }
  });
});
