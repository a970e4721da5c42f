/**
 * `crow acp` starts its one built-in crow-mcp at launch (before any session asks for it), every session, in any
 * directory, works in it (its own MCP session and shell, in its own cwd), a crow-mcp killed while sessions run commands
 * fails their calls with a named error and comes back for their next ones, an agent that exits has waited for its
 * toolserver to end, and one that is killed (even by kill -9) leaves no toolserver and no socket directory behind.
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { reply, type TempWorkspace, tempWorkspace, useAcpFixture } from "@crow/testkit";
import { until } from "./tools/helpers.js";

/** Child pids of a process (empty once it is gone). */
function children(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** Whether a process is running (a zombie nobody reaped yet counts as gone). */
function running(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

/** The text of a turn's tool call updates (status and content). */
function toolUpdates(updates: readonly { sessionUpdate: string }[]): string {
  return JSON.stringify(updates.filter((u) => u.sessionUpdate === "tool_call_update"));
}

describe("crow acp: the shared built-in toolserver", () => {
  const fx = useAcpFixture({ startAgent: false });
  let elsewhere: TempWorkspace;

  before(async () => {
    elsewhere = await tempWorkspace();
  });
  after(async () => {
    await elsewhere.cleanup();
  });

  test("it starts at launch, and sessions in any directory use it, each in its own cwd", async () => {
    const file = await fx.ws.write("notes.txt", "shared toolserver\n");
    const agent = await fx.spawn({ cwd: fx.ws.dir });
    try {
      const pid = agent.process.pid ?? 0;
      await until(() => children(pid).length === 1);
      const [shared] = children(pid);
      const here = await agent.newSession(fx.ws.dir);
      const there = await agent.newSession(elsewhere.dir);
      assert.deepEqual(children(pid), [shared], "one toolserver for both sessions");
      fx.mock.script(reply().toolCall("read", { file_path: file }), reply().text("done"));
      assert.match(toolUpdates((await agent.prompt(here.sessionId, "read it")).updates), /shared toolserver/);
      fx.mock.script(reply().toolCall("terminal", { command: "pwd" }), reply().text("done"));
      const pwd = toolUpdates((await agent.prompt(there.sessionId, "where")).updates);
      assert.ok(pwd.includes(elsewhere.dir), pwd);
      assert.deepEqual(children(pid), [shared]);
    } finally {
      await agent.close();
    }
  });

  test("kill -9 of crow-mcp while two sessions run commands: both get a named error, then both run a new command", async () => {
    const agent = await fx.spawn({ cwd: fx.ws.dir });
    try {
      const pid = agent.process.pid ?? 0;
      const one = await agent.newSession(fx.ws.dir);
      const two = await agent.newSession(elsewhere.dir);
      const long = { command: 'touch "$PWD/started"; sleep 60' };
      fx.mock.script(
        reply().toolCall("terminal", long),
        reply().toolCall("terminal", long),
        reply().text("it died"),
        reply().text("it died"),
      );
      const turns = Promise.all([agent.prompt(one.sessionId, "run"), agent.prompt(two.sessionId, "run")]);
      await until(() => existsSync(`${fx.ws.dir}/started`) && existsSync(`${elsewhere.dir}/started`));
      const [shared = 0] = children(pid);
      process.kill(shared, "SIGKILL");
      for (const turn of await turns) {
        assert.equal(turn.stopReason, "end_turn");
        const updates = toolUpdates(turn.updates);
        assert.match(updates, /"status":"failed"/);
        assert.match(
          updates,
          /MCP server \\"crow-mcp\\" died during the call \(the shared crow-mcp \(pid \d+\) was killed by SIGKILL\)/,
        );
      }
      for (const [session, dir] of [
        [one.sessionId, fx.ws.dir],
        [two.sessionId, elsewhere.dir],
      ] as const) {
        fx.mock.script(reply().toolCall("terminal", { command: "echo back in $PWD" }), reply().text("done"));
        const next = toolUpdates((await agent.prompt(session, "again")).updates);
        assert.ok(next.includes(`back in ${dir}`), next);
      }
      const [restarted] = children(pid);
      assert.ok(restarted !== undefined && restarted !== shared);
    } finally {
      await agent.close();
    }
  });

  test("an agent that exits without a session leaves no toolserver running", async () => {
    const agent = await fx.spawn({ cwd: fx.ws.dir });
    const pid = agent.process.pid ?? 0;
    await until(() => children(pid).length === 1);
    const [spare = 0] = children(pid);
    assert.equal(running(spare), true);
    await agent.close();
    await until(() => !running(spare));
  });

  test("when crow acp has exited, its crow-mcp and the session's shell have ended too (nothing writes afterwards)", async () => {
    const agent = await fx.spawn({ cwd: fx.ws.dir });
    const pid = agent.process.pid ?? 0;
    await until(() => children(pid).length === 1);
    const [shared = 0] = children(pid);
    const { sessionId } = await agent.newSession(fx.ws.dir);
    fx.mock.script(reply().toolCall("terminal", { command: "echo started" }), reply().text("done"));
    await agent.prompt(sessionId, "start a shell");
    // The shell and what starts it (bwrap when the sandbox is on), seen from the host.
    const below = (p: number): number[] => children(p).flatMap((child) => [child, ...below(child)]);
    const shellTree = below(shared);
    assert.ok(shellTree.length > 0, "the session's shell runs under crow-mcp");
    // An editor (or a test) removes the home directory as soon as the agent is gone: crow-mcp, which writes its
    // compile cache there as it exits, must be gone by then, not merely on its way out.
    await agent.close();
    assert.equal(running(shared), false, "crow-mcp outlived the agent");
    assert.deepEqual(shellTree.filter(running), [], "the shell outlived the agent");
  });

  test("kill -9 of the agent: its crow-mcp exits and removes the private socket directory", async () => {
    const agent = await fx.spawn({ cwd: fx.ws.dir });
    const pid = agent.process.pid ?? 0;
    await until(() => children(pid).length === 1);
    const [shared = 0] = children(pid);
    const args = readFileSync(`/proc/${shared}/cmdline`, "utf8").split("\0");
    const socket = args[args.indexOf("--socket") + 1] ?? "";
    const dir = path.dirname(socket);
    assert.match(path.basename(dir), /^crow-mcp-/);
    await until(() => existsSync(socket));
    agent.process.kill("SIGKILL");
    await until(() => !running(shared));
    await until(() => !existsSync(dir));
    await agent.close();
  });
});
