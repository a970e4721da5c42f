// crow-mcp --socket as the agent starts it: it says it listens before it has loaded the MCP SDK and the tools, so a
// client that asks at once must be served all the same, and an installation missing the tools must say so.
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { CROW_MCP_BIN, postOnSocket, type TempWorkspace, tempWorkspace } from "@crow/testkit";

interface Answer {
  status: number;
  sessionId: string | undefined;
  body: { result?: Record<string, unknown>; error?: { message: string } };
}

/** One POST of a JSON-RPC message to /mcp on the socket (crow-mcp answers a request without progress as JSON). */
async function post(socketPath: string, message: object, sessionId?: string, cwd?: string): Promise<Answer> {
  const answer = await postOnSocket(socketPath, message, {
    ...(sessionId ? { sessionId } : {}),
    ...(cwd ? { cwd } : {}),
  });
  return {
    status: answer.status,
    sessionId: answer.sessionId,
    body: answer.text ? (JSON.parse(answer.text) as Answer["body"]) : {},
  };
}

const initialize = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "socket-test", version: "0" } },
};

/** Starts crow-mcp (`bin`) on a socket in a fresh directory; resolves once it says it listens. */
async function startSocket(
  bin: string,
  cwd: string,
): Promise<{ child: ChildProcess; socketPath: string; dir: string }> {
  const dir = mkdtempSync(path.join(tmpdir(), "crow-mcp-test-"));
  const socketPath = path.join(dir, "mcp.sock");
  const child = spawn(process.execPath, [bin, "--socket", socketPath, "--exit-with-stdin"], {
    cwd,
    env: { ...process.env, HOME: dir },
    stdio: ["pipe", "ignore", "pipe"],
  });
  let stderr = "";
  await new Promise<void>((resolve, reject) => {
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
      if (stderr.includes("listening on unix:")) resolve();
    });
    child.once("exit", (code) => reject(new Error(`crow-mcp exited with ${code} before listening: ${stderr}`)));
  });
  return { child, socketPath, dir };
}

async function stop(server: { child: ChildProcess; dir: string }): Promise<void> {
  const exited = new Promise((resolve) => server.child.once("exit", resolve));
  server.child.stdin?.end();
  await exited;
  rmSync(server.dir, { recursive: true, force: true });
}

describe("crow-mcp --socket", () => {
  let ws: TempWorkspace;
  before(async () => {
    ws = await tempWorkspace();
  });
  after(() => ws.cleanup());

  test("a session opened the moment it says it listens gets every tool, working in its own directory", async () => {
    const server = await startSocket(CROW_MCP_BIN, tmpdir());
    try {
      const init = await post(server.socketPath, initialize, undefined, ws.dir);
      assert.equal(init.status, 200, JSON.stringify(init.body));
      assert.ok(init.sessionId, "initialize assigns a session id");
      const session = init.sessionId;
      await post(server.socketPath, { jsonrpc: "2.0", method: "notifications/initialized" }, session);
      const list = await post(server.socketPath, { jsonrpc: "2.0", id: 2, method: "tools/list" }, session);
      const names = ((list.body.result?.tools ?? []) as Array<{ name: string }>).map((tool) => tool.name).sort();
      assert.deepEqual(names, ["edit", "read", "terminal", "web_fetch", "web_search", "write"]);

      const call = (id: number, name: string, args: object) =>
        post(
          server.socketPath,
          { jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } },
          session,
        );
      const text = (answer: Answer) => ((answer.body.result?.content ?? []) as Array<{ text: string }>)[0]?.text;
      const file = ws.path("first.txt");
      await call(3, "write", { file_path: file, content: "first session" });
      assert.equal(text(await call(4, "read", { file_path: file })), "1→first session");
      const pwd = await call(5, "terminal", { command: "pwd" });
      assert.match(text(pwd) ?? "", new RegExp(`^${ws.dir}$`, "m"));
    } finally {
      await stop(server);
    }
  });

  test("an installation missing the tools still listens, and every request says what is wrong", async () => {
    // A copy of the bundle, one level below a package root as installed, without the chunk that holds the sessions.
    const pkg = mkdtempSync(path.join(tmpdir(), "crow-mcp-broken-"));
    try {
      const bundle = path.dirname(CROW_MCP_BIN);
      mkdirSync(path.join(pkg, "bundle"));
      copyFileSync(path.join(bundle, "..", "package.json"), path.join(pkg, "package.json"));
      for (const name of readdirSync(bundle)) {
        if (!name.startsWith("socket-sessions-")) copyFileSync(path.join(bundle, name), path.join(pkg, "bundle", name));
      }
      const server = await startSocket(path.join(pkg, "bundle", path.basename(CROW_MCP_BIN)), ws.dir);
      try {
        for (const attempt of [1, 2]) {
          const init = await post(server.socketPath, initialize);
          assert.equal(init.status, 500, `attempt ${attempt}`);
          assert.match(init.body.error?.message ?? "", /could not load its tools .*reinstall crow/);
        }
      } finally {
        await stop(server);
      }
    } finally {
      rmSync(pkg, { recursive: true, force: true });
    }
  });
});
