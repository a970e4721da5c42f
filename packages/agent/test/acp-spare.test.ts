/**
 * `crow acp` starts a spare built-in crow-mcp in its own cwd at startup: the first session in that directory adopts
 * it (its tools work and no second toolserver is spawned), a session elsewhere gets its own crow-mcp in its cwd and
 * the spare is stopped, and an agent that exits without a session leaves no toolserver behind.
 */
import assert from "node:assert/strict";
import { readFileSync, readlinkSync } from "node:fs";
import { describe, test } from "node:test";
import { reply, useAcpFixture } from "@crow/testkit";
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

describe("crow acp: the spare built-in toolserver", () => {
  const fx = useAcpFixture({ startAgent: false });

  test("the first session in the agent's directory adopts it and its tools work", async () => {
    const file = await fx.ws.write("notes.txt", "adopted spare\n");
    const agent = await fx.spawn({ cwd: fx.ws.dir });
    try {
      const pid = agent.process.pid ?? 0;
      await until(() => children(pid).length === 1);
      const [spare] = children(pid);
      const { sessionId } = await agent.newSession(fx.ws.dir);
      assert.deepEqual(children(pid), [spare], "the session uses the spare, no second toolserver");
      fx.mock.script(reply().toolCall("read", { file_path: file }), reply().text("done"));
      const { updates } = await agent.prompt(sessionId, "read it");
      const result = updates.find((u) => u.sessionUpdate === "tool_call_update" && u.status === "completed");
      assert.match(JSON.stringify(result), /adopted spare/);
    } finally {
      await agent.close();
    }
  });

  test("a session in another directory gets its own toolserver there and the spare is stopped", async () => {
    const elsewhere = await fx.tempDir();
    const agent = await fx.spawn({ cwd: fx.ws.dir });
    try {
      const pid = agent.process.pid ?? 0;
      await until(() => children(pid).length === 1);
      const [spare = 0] = children(pid);
      await agent.newSession(elsewhere);
      await until(() => !running(spare));
      const [own = 0, ...more] = children(pid);
      assert.deepEqual(more, []);
      assert.notEqual(own, spare);
      assert.equal(readlinkSync(`/proc/${own}/cwd`), elsewhere);
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
});
