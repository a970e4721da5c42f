/**
 * crow-mcp's `read` (and `edit`, which reads) under a sandbox policy: the policy's hidden files (Crow's `.env` and
 * config.yaml, provider keys) are refused on their real path, as the sandboxed shell cannot read them either; with
 * the sandbox off they are read (the shell could read them too). Real files, real crow-mcp over stdio.
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { link, mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { connectStdio, type McpConnection, type TempWorkspace, tempWorkspace } from "@crow/testkit";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

const SECRET = "sk-readguard-secret";

describe("read under a sandbox policy: Crow's provider keys stay hidden from the model", () => {
  let ws: TempWorkspace;
  let crowHome: string;
  let mcp: McpConnection;
  let policy: Record<string, unknown>;

  /** Calls `tool` with the agent's per-call policy (or `callPolicy`) and returns the text and error flag. */
  async function call(tool: string, args: Record<string, unknown>, callPolicy: unknown = policy) {
    const result = (await mcp.client.callTool({
      name: tool,
      arguments: args,
      _meta: { "crow/sandbox": callPolicy },
    })) as CallToolResult;
    const text = result.content.map((c) => (c.type === "text" ? c.text : `[${c.type}]`)).join("");
    return { text, isError: result.isError === true };
  }

  before(async () => {
    ws = await tempWorkspace("crow-readguard-");
    crowHome = await mkdtemp(path.join("/var/tmp", "crow-readguard-home-"));
    await writeFile(path.join(crowHome, ".env"), `OPENAI_API_KEY=${SECRET}\n`);
    await writeFile(path.join(crowHome, "config.yaml"), `providers:\n  openai:\n    api_key: ${SECRET}\n`);
    await mkdir(path.join(crowHome, "keys"));
    await writeFile(path.join(crowHome, "keys", "more.txt"), `${SECRET}\n`);
    await writeFile(path.join(crowHome, "notes.txt"), "visible notes\n");
    await ws.write("src/app.ts", "export const app = 1;\n");
    policy = {
      mode: "workspace-write",
      writable: [ws.dir],
      readOnly: [crowHome],
      network: true,
      hidden: [path.join(crowHome, ".env"), path.join(crowHome, "config.yaml"), path.join(crowHome, "keys")],
    };
    mcp = await connectStdio({ cwd: ws.dir });
  });
  after(async () => {
    await mcp.close();
    await ws.cleanup();
    await rm(crowHome, { recursive: true, force: true });
  });

  test("reading the hidden .env and config.yaml is refused with a message the model can act on", async () => {
    for (const name of [".env", "config.yaml"]) {
      const result = await call("read", { file_path: path.join(crowHome, name) });
      assert.equal(result.isError, true, name);
      assert.doesNotMatch(result.text, new RegExp(SECRET), name);
      assert.match(
        result.text,
        /one of Crow's own files \(provider keys or session transcripts\) and is hidden from tools/,
        name,
      );
      assert.match(result.text, /Ask the user for what you need from it/, name);
    }
    const readOnly = await call("read", { file_path: path.join(crowHome, ".env") }, { ...policy, mode: "read-only" });
    assert.match(readOnly.text, /hidden from tools/, "read-only mode hides them too");
  });

  test("a symlink, a .. path and a hard link to .env are refused too; a hidden directory covers its files", async () => {
    await symlink(path.join(crowHome, ".env"), ws.path("x"));
    await symlink(crowHome, ws.path("home-link"));
    await link(path.join(crowHome, ".env"), path.join(crowHome, "hard-copy"));
    const attempts = [
      ws.path("x"),
      ws.path("home-link/.env"),
      `${ws.dir}/src/../home-link/config.yaml`,
      path.join(crowHome, "hard-copy"),
      path.join(crowHome, "keys", "more.txt"),
      ws.path("home-link/keys/more.txt"),
    ];
    for (const file of attempts) {
      const result = await call("read", { file_path: file });
      assert.equal(result.isError, true, file);
      assert.doesNotMatch(result.text, new RegExp(SECRET), file);
      assert.match(result.text, /hidden from tools/, file);
    }
    assert.match((await call("read", { file_path: ws.path("x") })).text, /really .*\/\.env\)/);
  });

  test("an edit of a hidden file is refused before it is read (its refusals would quote the file)", async () => {
    const result = await call("edit", {
      file_path: ws.path("x"),
      old_string: "no such text",
      new_string: "y",
    });
    assert.equal(result.isError, true);
    assert.doesNotMatch(result.text, new RegExp(SECRET));
    assert.match(result.text, /hidden from tools/);
  });

  test("ordinary files are still read: in the workspace, and beside the hidden ones", async () => {
    const app = await call("read", { file_path: ws.path("src/app.ts") });
    assert.equal(app.isError, false);
    assert.match(app.text, /export const app = 1;/);
    const notes = await call("read", { file_path: path.join(crowHome, "notes.txt") });
    assert.match(notes.text, /visible notes/);
  });

  test("a hidden entry given a reason is refused with that reason, not as one of Crow's own files", async () => {
    const project = await mkdtemp(path.join("/var/tmp", "crow-readguard-project-"));
    try {
      await writeFile(path.join(project, "notes.txt"), "another project\n");
      await writeFile(path.join(project, "key.pem"), "private key\n");
      const given = {
        ...policy,
        hidden: [...(policy.hidden as string[]), project, path.join(project, "key.pem")],
        hiddenReasons: { [project]: "outside-view", [path.join(project, "key.pem")]: "private" },
      };
      const outside = await call("read", { file_path: path.join(project, "notes.txt") }, given);
      assert.equal(outside.isError, true);
      assert.doesNotMatch(outside.text, /another project|Crow's own files/);
      assert.match(outside.text, /was not read: it is outside what this sandbox shows/);
      const own = await call("read", { file_path: path.join(crowHome, ".env") }, given);
      assert.match(
        own.text,
        /one of Crow's own files \(provider keys or session transcripts\)/,
        "the others keep theirs",
      );
      const key = await call("read", { file_path: path.join(project, "key.pem") }, given);
      assert.match(key.text, /was not read: other users may not read it on the host/);
      // Validated like the rest of the policy: a reason for a path not hidden, or an unknown reason, refuses the call.
      for (const hiddenReasons of [{ "/srv": "outside-view" }, { [project]: "secret" }, ["outside-view"]]) {
        const bad = await call("read", { file_path: ws.path("src/app.ts") }, { ...given, hiddenReasons });
        assert.equal(bad.isError, true, JSON.stringify(hiddenReasons));
        assert.match(
          bad.text,
          /invalid _meta\["crow\/sandbox"\]: sandbox hiddenReasons/,
          JSON.stringify(hiddenReasons),
        );
      }
    } finally {
      await rm(project, { recursive: true, force: true });
    }
  });

  test("with the sandbox off the files are read (the shell could read them as well: README, Security notes)", async () => {
    const off = { mode: "off", writable: [], readOnly: [], network: true };
    const result = await call("read", { file_path: path.join(crowHome, ".env") }, off);
    assert.equal(result.isError, false);
    assert.match(result.text, new RegExp(SECRET));
  });
});

describe("read under a sandbox policy: another process's environment", () => {
  let ws: TempWorkspace;
  let mcp: McpConnection;
  let child: ChildProcess;

  before(async () => {
    ws = await tempWorkspace("crow-readguard-env-");
    mcp = await connectStdio({ cwd: ws.dir });
    // A first variable longer than the binary sniff's 8 KiB head, ending in a newline (exported shell functions
    // have them): the NUL separators alone would not stop the read, nor the 2000-character line cut.
    child = spawn("sleep", ["60"], { env: { LONG_FIRST: `${"x".repeat(9000)}\n`, OPENAI_API_KEY: SECRET } });
  });
  after(async () => {
    child.kill();
    await mcp.close();
    await ws.cleanup();
  });

  test("/proc/<pid>/environ is refused while the sandbox is on, and read with it off", async () => {
    const file = `/proc/${child.pid}/environ`;
    const policy = { mode: "workspace-write", writable: [ws.dir], readOnly: [], network: true };
    const on = (await mcp.client.callTool({
      name: "read",
      arguments: { file_path: file },
      _meta: { "crow/sandbox": policy },
    })) as CallToolResult;
    const onText = JSON.stringify(on.content);
    assert.equal(on.isError, true);
    assert.doesNotMatch(onText, new RegExp(SECRET));
    assert.match(onText, /a process's environment can hold API keys/);
    const off = (await mcp.client.callTool({
      name: "read",
      arguments: { file_path: file },
      _meta: { "crow/sandbox": { mode: "off", writable: [], readOnly: [], network: true } },
    })) as CallToolResult;
    assert.match(JSON.stringify(off.content), new RegExp(SECRET), "the check above is not vacuous");
  });
});
