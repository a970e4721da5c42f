// The test client (and the benches) over a `crow acp` that goes away while it is used: pending requests reject with
// how the agent ended and the end of its stderr, not with a bare "ACP connection closed".
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { AgentExitError, type MockLlm, reply, spawnAcpAgent, startMockLlm, tempWorkspace } from "@crow/testkit";

describe("testkit: a spawned crow acp that goes away", () => {
  let mock: MockLlm;
  before(async () => {
    mock = await startMockLlm();
  });
  after(() => mock.close());

  test("killed mid-turn: the pending prompt rejects naming the signal", async () => {
    const ws = await tempWorkspace();
    // The agent's home is the test's, so nothing is left behind when the client never closes it normally.
    const env = { CROW_HOME: ws.path("home"), HOME: ws.path("home") };
    try {
      const agent = await spawnAcpAgent({ llmUrl: mock.url, cwd: ws.dir, env });
      const { sessionId } = await agent.newSession(ws.dir);
      const before = mock.requests.length;
      mock.script(reply().text("thinking").hang());
      const turn = agent.prompt(sessionId, "go");
      turn.catch(() => {});
      await mock.waitForRequests(before + 1);
      const pid = agent.process.pid;
      agent.process.kill("SIGKILL");
      await assert.rejects(turn, (error: unknown) => {
        assert.ok(error instanceof AgentExitError, String(error));
        assert.equal(error.exit.signal, "SIGKILL");
        assert.match(error.message, new RegExp(`crow acp \\(pid ${pid}\\) was killed by SIGKILL`));
        return true;
      });
      // Later requests fail the same way.
      await assert.rejects(agent.newSession(ws.dir), /was killed by SIGKILL/);
      assert.equal(await agent.close(), null);
    } finally {
      await ws.cleanup();
    }
  });

  test("exiting at startup (a broken .env): spawning rejects with the exit code and what the agent said", async () => {
    const ws = await tempWorkspace();
    await ws.write("home/.env", "this is not a variable\n");
    const env = { CROW_HOME: ws.path("home"), HOME: ws.path("home") };
    try {
      await assert.rejects(spawnAcpAgent({ llmUrl: mock.url, cwd: ws.dir, env }), (error: unknown) => {
        assert.ok(error instanceof AgentExitError, String(error));
        assert.equal(error.exit.code, 2);
        assert.match(error.message, /exited with code 2; the end of its stderr:\n/);
        assert.match(error.stderrTail, /\.env:1: expected KEY=value/);
        return true;
      });
    } finally {
      await ws.cleanup();
    }
  });
});
