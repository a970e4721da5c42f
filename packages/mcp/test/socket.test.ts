// crow-mcp --socket as the agent starts it: one MCP session per connection, one message per line. It says it listens
// before it has loaded the MCP SDK and the tools, so a client that asks at once must be served all the same, and an
// installation missing the tools must say so.
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import {
  CROW_MCP_BIN,
  connectSocket,
  type SocketAnswer,
  type SocketSession,
  socketInitialize,
  type TempWorkspace,
  tempWorkspace,
} from "@crow/testkit";
import { startSocketServer } from "../src/socket.js";

const text = (answer: SocketAnswer) => ((answer.result?.content ?? []) as Array<{ text: string }>)[0]?.text ?? "";

/** A session on the socket, initialized (in `cwd` if given). */
async function openSession(socketPath: string, cwd?: string): Promise<SocketSession> {
  const session = await connectSocket(socketPath);
  const init = await session.request(socketInitialize(cwd));
  assert.ok(init.result, JSON.stringify(init));
  session.notify({ method: "notifications/initialized" });
  return session;
}

/** One tool call (`id` its request id). */
function callTool(session: SocketSession, id: number, name: string, args: object): Promise<SocketAnswer> {
  return session.request({ id, method: "tools/call", params: { name, arguments: args } });
}

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
      const session = await openSession(server.socketPath, ws.dir);
      const list = await session.request({ id: 2, method: "tools/list" });
      const names = ((list.result?.tools ?? []) as Array<{ name: string }>).map((tool) => tool.name).sort();
      assert.deepEqual(names, ["edit", "read", "terminal", "web_fetch", "web_search", "write"]);

      const call = (id: number, name: string, args: object) => callTool(session, id, name, args);
      const file = ws.path("first.txt");
      await call(3, "write", { file_path: file, content: "first session" });
      assert.equal(text(await call(4, "read", { file_path: file })), "first session");
      const pwd = await call(5, "terminal", { command: "pwd" });
      assert.match(text(pwd), new RegExp(`^${ws.dir}$`, "m"));
      session.close();
    } finally {
      await stop(server);
    }
  });

  test("each connection is its own session, and its shell ends with its connection", async () => {
    const server = await startSocket(CROW_MCP_BIN, ws.dir);
    try {
      const [first, second] = [await openSession(server.socketPath), await openSession(server.socketPath)];
      const run = (session: SocketSession, id: number, command: string) =>
        callTool(session, id, "terminal", { command });
      await run(first, 2, "export CROW_SOCKET_MARK=first; cd /");
      const seen = text(await run(second, 2, 'echo "mark=$CROW_SOCKET_MARK"; pwd'));
      assert.match(seen, /^mark=$/m, "the second session's shell does not see the first's variables");
      assert.match(seen, new RegExp(`^${ws.dir}$`, "m"), "nor its cd");
      const shellPid = Number(/^\d+$/m.exec(text(await run(first, 3, "echo $$")))?.[0]);
      assert.ok(shellPid > 0);
      first.close();
      await first.closed;
      const deadline = Date.now() + 5000;
      while (existsSync(`/proc/${shellPid}`) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      assert.equal(existsSync(`/proc/${shellPid}`), false, "the closed session's shell has stopped");
      assert.match(text(await run(second, 3, "echo still here")), /^still here$/m, "the other session goes on");
      second.close();
    } finally {
      await stop(server);
    }
  });

  test("messages of megabytes, with multi-byte characters, arrive whole both ways", async () => {
    const server = await startSocket(CROW_MCP_BIN, ws.dir);
    try {
      const session = await openSession(server.socketPath);
      const line = "é🦜 é🦜 é🦜 é🦜 é🦜 é🦜 é🦜 é🦜 é🦜 é🦜"; // 70 bytes of UTF-8
      const lines = 50_000;
      const content = `${Array.from({ length: lines }, (_, i) => `${i} ${line}`).join("\n")}\n`;
      const file = ws.path("big.txt");
      const call = (id: number, name: string, args: object) => callTool(session, id, name, args);
      const written = await call(2, "write", { file_path: file, content });
      assert.equal(written.result?.isError, undefined, text(written));
      assert.equal(readFileSync(file, "utf8"), content, "the 3.8 MB request arrived whole");
      const read = text(await call(3, "read", { file_path: file, limit: lines }));
      assert.match(read, new RegExp(`^${lines}\t${lines - 1} ${line}$`, "m"), "the answer of megabytes arrived whole");
      assert.equal(read.split("\n").filter((l) => l.endsWith(line)).length, lines);
      session.close();
    } finally {
      await stop(server);
    }
  });

  test("a connection that does not begin with initialize, or names a bad directory, is told why and closed", async () => {
    const server = await startSocket(CROW_MCP_BIN, ws.dir);
    try {
      const early = await connectSocket(server.socketPath);
      const refused = await early.request({ id: 7, method: "tools/list" });
      assert.match(refused.error?.message ?? "", /send initialize first/);
      await early.closed;
      for (const [cwd, why] of [
        ["relative/dir", /must be an absolute path/],
        [ws.path("missing"), /cannot be used/],
      ] as const) {
        const session = await connectSocket(server.socketPath);
        const answer = await session.request(socketInitialize(cwd));
        assert.match(answer.error?.message ?? "", why);
        await session.closed;
      }
    } finally {
      await stop(server);
    }
  });

  test("a session silent for the idle limit is ended, but not while a call runs, nor kept by a cancelled one", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "crow-mcp-idle-"));
    const server = await startSocketServer(path.join(dir, "mcp.sock"), { cwd: ws.dir, sessionIdleMs: 300 });
    try {
      const busy = await openSession(server.socketPath);
      const idle = await openSession(server.socketPath);
      const running = callTool(busy, 2, "terminal", { command: "sleep 1.5; echo slept" });
      await idle.closed;
      assert.equal(server.sessionCount(), 1, "the silent session was ended; the busy one was not");
      assert.match(text(await running), /^slept$/m);
      busy.close();

      // A cancelled call is answered by nobody: it must not keep its session from idling out.
      const cancelled = await openSession(server.socketPath);
      callTool(cancelled, 2, "terminal", { command: "sleep 30" }).catch(() => undefined);
      cancelled.notify({ method: "notifications/cancelled", params: { requestId: 2, reason: "test" } });
      const ended = await Promise.race([
        cancelled.closed.then(() => true),
        new Promise<false>((resolve) => setTimeout(() => resolve(false), 5000)),
      ]);
      assert.ok(ended, "the session with only a cancelled call was ended when idle");
    } finally {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("an installation missing the tools still listens, and every session is told what is wrong", async () => {
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
          const session = await connectSocket(server.socketPath);
          const init = await session.request(socketInitialize());
          assert.match(init.error?.message ?? "", /could not load its tools .*reinstall crow/, `attempt ${attempt}`);
          await session.closed;
        }
      } finally {
        await stop(server);
      }
    } finally {
      rmSync(pkg, { recursive: true, force: true });
    }
  });
});
