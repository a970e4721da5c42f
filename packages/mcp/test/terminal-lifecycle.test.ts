import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { after, before, describe, test } from "node:test";
import {
  callTool,
  connectStdio,
  type McpConnection,
  startHttp,
  type TempWorkspace,
  tempWorkspace,
} from "@crow/testkit";
import type { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

/** Whether `pid` is a live (non-zombie) process, according to ps. */
function alive(pid: number): boolean {
  try {
    const stat = execFileSync("ps", ["-o", "stat=", "-p", String(pid)], { encoding: "utf8" }).trim();
    return stat !== "" && !stat.startsWith("Z");
  } catch {
    return false; // ps exits 1 when there is no such process
  }
}

/** Waits (bounded) until none of `pids` is alive; returns the survivors. */
async function survivors(pids: number[], withinMs = 5000): Promise<number[]> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const left = pids.filter(alive);
    if (left.length === 0 || Date.now() > deadline) return left;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Starts a shell with a background job, a nohup'd one and one started from a subshell (so its parent is not the
 * shell); returns all their pids. (What leaves the session and the tree, setsid and double forks:
 * terminal-escapees.test.ts.)
 */
async function spawnFamily(mcp: McpConnection): Promise<number[]> {
  const result = await callTool(mcp.client, "terminal", {
    command: "echo $$; sleep 300 & echo $!; nohup sleep 301 >/dev/null 2>&1 & echo $!; (sleep 303 & echo $!)",
  });
  const pids = result.text
    .split("\n")
    .filter((line) => /^\d+$/.test(line))
    .map(Number);
  assert.equal(pids.length, 4, result.text);
  for (const pid of pids) assert.ok(alive(pid), `process ${pid} runs before the server exits`);
  return pids;
}

describe("terminal lifecycle", () => {
  let ws: TempWorkspace;
  before(async () => {
    ws = await tempWorkspace();
  });
  after(async () => {
    await ws.cleanup();
  });

  test("stdio: no shell or child process is left behind after the client disconnects", async () => {
    const mcp = await connectStdio({ cwd: ws.dir });
    let pids: number[];
    try {
      pids = await spawnFamily(mcp);
    } finally {
      await mcp.close();
    }
    assert.ok(mcp.pid !== undefined);
    assert.deepEqual(await survivors([mcp.pid, ...pids]), []);
  });

  test("stdio: a shell's jobs are killed when the server gets SIGTERM", async () => {
    const mcp = await connectStdio({ cwd: ws.dir });
    try {
      const pids = await spawnFamily(mcp);
      assert.ok(mcp.pid !== undefined);
      process.kill(mcp.pid, "SIGTERM");
      assert.deepEqual(await survivors([mcp.pid, ...pids]), []);
    } finally {
      await mcp.close().catch(() => undefined);
    }
  });

  test("after `exit`, the old shell's background jobs are gone too", async () => {
    const mcp = await connectStdio({ cwd: ws.dir });
    try {
      const pids = await spawnFamily(mcp);
      const exited = await callTool(mcp.client, "terminal", { command: "exit" });
      assert.match(exited.text, /The shell exited/);
      assert.deepEqual(await survivors(pids), []);
    } finally {
      await mcp.close();
    }
  });

  test("HTTP: two concurrent MCP sessions get separate shells, and stopping the server kills both", async () => {
    const server = await startHttp({ cwd: ws.dir });
    try {
      const a = await server.connect();
      const b = await server.connect();
      await callTool(a.client, "terminal", { command: "cd / && export WHO=alice" });
      await callTool(b.client, "terminal", { command: "export WHO=bob" });
      // Both sessions run a command at the same time; neither waits for nor sees the other.
      const [ra, rb] = await Promise.all([
        callTool(a.client, "terminal", { command: 'sleep 0.5; echo "$WHO $PWD $$"' }),
        callTool(b.client, "terminal", { command: 'sleep 0.5; echo "$WHO $PWD $$"' }),
      ]);
      const [whoA, cwdA, pidA] = (ra.text.split("\n")[0] ?? "").split(" ");
      const [whoB, cwdB, pidB] = (rb.text.split("\n")[0] ?? "").split(" ");
      assert.equal(whoA, "alice");
      assert.equal(cwdA, "/");
      assert.equal(whoB, "bob");
      assert.equal(cwdB, ws.dir);
      assert.notEqual(pidA, pidB);
      // Ending session A (HTTP DELETE) kills its shell; session B's shell is untouched.
      const transportA = a.client.transport as StreamableHTTPClientTransport;
      await transportA.terminateSession();
      assert.deepEqual(await survivors([Number(pidA)]), []);
      assert.ok(alive(Number(pidB)));
      const family = await spawnFamily(b);
      await server.stop();
      assert.deepEqual(await survivors([Number(pidB), ...family]), []);
    } finally {
      await server.stop();
    }
  });
});
