// crow-mcp --http's token out of other users' sight: --token-file and CROW_MCP_TOKEN keep it off the command line
// (which every local user reads in ps or /proc/<pid>/cmdline), and --token itself warns that it is exposed.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { CROW_MCP_BIN, callTool, startHttp, type TempWorkspace, tempWorkspace } from "@crow/testkit";

const TOKEN = "file-token-0123456789abcdef";

/** The command line of `pid` as another user (uid 65534) reads it. */
function cmdlineAsOtherUser(pid: number): string {
  const run = spawnSync(
    "setpriv",
    ["--reuid=65534", "--regid=65534", "--clear-groups", "cat", `/proc/${pid}/cmdline`],
    { encoding: "utf8" },
  );
  assert.equal(run.status, 0, run.stderr);
  return run.stdout.replaceAll("\0", " ");
}

describe("crow-mcp --http: where the token comes from", () => {
  let ws: TempWorkspace;
  let tokenFile = "";
  before(async () => {
    ws = await tempWorkspace();
    tokenFile = path.join(ws.dir, "token");
    writeFileSync(tokenFile, `${TOKEN}\n`);
    chmodSync(tokenFile, 0o600);
  });
  after(() => ws.cleanup());

  test("--token-file: the token is required, and another user's ps shows no token", async () => {
    const server = await startHttp({ cwd: ws.dir, args: ["--token-file", tokenFile] });
    try {
      assert.equal(server.token, TOKEN);
      await assert.rejects(server.connect({ token: null }), /401|Unauthorized/);
      const mcp = await server.connect();
      assert.match((await callTool(mcp.client, "terminal", { command: "echo served" })).text, /served/);
      await mcp.close();
      const cmdline = cmdlineAsOtherUser(server.process.pid ?? 0);
      assert.match(cmdline, /--token-file/);
      assert.doesNotMatch(cmdline, new RegExp(TOKEN));
      assert.doesNotMatch(server.stderr(), /warning/);
      assert.doesNotMatch(server.stderr(), new RegExp(TOKEN), "a token the user chose is not printed");
    } finally {
      await server.stop();
    }
  });

  test("--token-file is hidden from the sandboxed shell of every session (it could open an unconfined one)", async () => {
    const server = await startHttp({ cwd: ws.dir, args: ["--token-file", tokenFile, "--sandbox", "workspace-write"] });
    try {
      const mcp = await server.connect();
      const read = await callTool(mcp.client, "terminal", { command: `cat ${tokenFile}; echo "[$CROW_MCP_TOKEN]"` });
      assert.doesNotMatch(read.text, new RegExp(TOKEN), read.text);
      assert.match(read.text, /\[\]/);
      await mcp.close();
    } finally {
      await server.stop();
    }
  });

  test("CROW_MCP_TOKEN works the same; --token works but warns that every local user can read it", async () => {
    const fromEnv = await startHttp({ cwd: ws.dir, env: { CROW_MCP_TOKEN: TOKEN } });
    try {
      await assert.rejects(fromEnv.connect({ token: null }), /401|Unauthorized/);
      await (await fromEnv.connect()).close();
      assert.doesNotMatch(cmdlineAsOtherUser(fromEnv.process.pid ?? 0), new RegExp(TOKEN));
    } finally {
      await fromEnv.stop();
    }
    const onCommandLine = await startHttp({ cwd: ws.dir, args: ["--token", TOKEN] });
    try {
      assert.match(onCommandLine.stderr(), /warning: --token puts the token on the command line.*--token-file/);
      await (await onCommandLine.connect()).close();
    } finally {
      await onCommandLine.stop();
    }
  });

  test("a token file that is missing or empty, or given with --token, is a usage error", () => {
    const empty = path.join(ws.dir, "empty");
    writeFileSync(empty, "\n");
    for (const [args, message] of [
      [["--token-file", path.join(ws.dir, "missing")], /cannot read --token-file/],
      [["--token-file", empty], /is empty: put the token on its first line/],
      [["--token-file", tokenFile, "--token", "x"], /--token and --token-file exclude each other/],
      [["--token-file", tokenFile, "--no-auth"], /exclude each other/],
    ] as const) {
      const run = spawnSync(process.execPath, [CROW_MCP_BIN, "--http", "--port", "0", ...args], { encoding: "utf8" });
      assert.equal(run.status, 2, run.stderr);
      assert.match(run.stderr, message);
    }
    assert.ok(readFileSync(tokenFile, "utf8").startsWith(TOKEN));
  });
});
