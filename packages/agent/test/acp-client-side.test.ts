import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  type AcpTestClient,
  type MockLlm,
  reply,
  spawnAcpAgent,
  startMockLlm,
  type TempWorkspace,
  tempWorkspace,
  textReply,
} from "@crow/testkit";

describe("crow acp: the client's terminal and fs when it advertises them", () => {
  let mock: MockLlm;
  let ws: TempWorkspace;
  let agent: AcpTestClient;

  before(async () => {
    mock = await startMockLlm();
    ws = await tempWorkspace();
    agent = await spawnAcpAgent({ llmUrl: mock.url, fs: true, terminal: true });
  });
  after(async () => {
    await agent.close();
    await mock.close();
    await ws.cleanup();
  });

  test("terminal commands run in the client's terminal, embedded in the tool call and released", async () => {
    const { sessionId } = await agent.newSession(ws.dir);
    mock.script(
      reply().toolCall("terminal", { command: "echo from-client-terminal; pwd" }),
      textReply("ran it").expect((req) => {
        const tool = String(req.body.messages.at(-1)?.content);
        assert.match(tool, /from-client-terminal/);
        assert.ok(tool.includes(ws.dir), "ran in the session cwd");
      }),
    );
    const turn = await agent.prompt(sessionId, "run");
    assert.equal(turn.stopReason, "end_turn");
    assert.equal(agent.terminalCalls.length, 1);
    assert.match(agent.terminalCalls[0] ?? "", /from-client-terminal/);
    const embedded = turn.updates.find(
      (u) => u.sessionUpdate === "tool_call_update" && u.content?.some((c) => c.type === "terminal"),
    );
    assert.ok(embedded?.sessionUpdate === "tool_call_update");
    const terminalId = embedded.content?.find((c) => c.type === "terminal");
    assert.ok(terminalId?.type === "terminal");
    assert.ok(agent.releasedTerminals.includes(terminalId.terminalId), "the terminal was released");
    mock.assertDone();
  });

  test("reads and writes go through the client's fs", async () => {
    await ws.write("notes.md", "# Notes\nline two\n");
    const { sessionId } = await agent.newSession(ws.dir);
    mock.script(
      reply().toolCall("read", { file_path: ws.path("notes.md") }),
      reply()
        .toolCall("write", { file_path: ws.path("out.md"), content: "written by the editor\n" })
        .expect((req) => assert.match(String(req.body.messages.at(-1)?.content), /line two/)),
      textReply("done"),
    );
    const turn = await agent.prompt(sessionId, "copy");
    assert.equal(turn.stopReason, "end_turn");
    assert.equal(await ws.read("out.md"), "written by the editor\n");
    assert.ok(agent.fsCalls.includes(`read ${ws.path("notes.md")}`), agent.fsCalls.join());
    assert.ok(agent.fsCalls.includes(`write ${ws.path("out.md")}`), agent.fsCalls.join());
    const diff = turn.updates.find(
      (u) => u.sessionUpdate === "tool_call_update" && u.content?.some((c) => c.type === "diff"),
    );
    assert.ok(diff, "the write shows a diff");
    mock.assertDone();
  });
});
