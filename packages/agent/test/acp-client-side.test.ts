import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, test } from "node:test";
import { reply, textReply, useAcpFixture } from "@crow/testkit";

describe("crow acp: the client's terminal and fs when it advertises them", () => {
  // The editor's terminal runs commands unconfined: Crow uses it only with the sandbox off
  // (acp-editor-terminal-sandbox.test.ts: with it on, commands stay in Crow's confined shell).
  const fx = useAcpFixture({
    agent: { fs: true, terminal: true },
    prepare: ({ crowHome }) => writeFile(path.join(crowHome, "config.yaml"), "sandbox: off\n"),
  });

  test("sandbox off: terminal commands run in the client's terminal, embedded in the tool call and released", async () => {
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    fx.mock.script(
      reply().toolCall("terminal", { command: "echo from-client-terminal; pwd" }),
      textReply("ran it").expect((req) => {
        const tool = String(req.body.messages.at(-1)?.content);
        assert.match(tool, /from-client-terminal/);
        assert.ok(tool.includes(fx.ws.dir), "ran in the session cwd");
      }),
    );
    const turn = await fx.agent.prompt(sessionId, "run");
    assert.equal(turn.stopReason, "end_turn");
    assert.equal(fx.agent.terminalCalls.length, 1);
    assert.match(fx.agent.terminalCalls[0] ?? "", /from-client-terminal/);
    const embedded = turn.updates.find(
      (u) => u.sessionUpdate === "tool_call_update" && u.content?.some((c) => c.type === "terminal"),
    );
    assert.ok(embedded?.sessionUpdate === "tool_call_update");
    const terminalId = embedded.content?.find((c) => c.type === "terminal");
    assert.ok(terminalId?.type === "terminal");
    assert.ok(fx.agent.releasedTerminals.includes(terminalId.terminalId), "the terminal was released");
    fx.mock.assertDone();
  });

  test("reads and writes go through the client's fs", async () => {
    await fx.ws.write("notes.md", "# Notes\nline two\n");
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    fx.mock.script(
      reply().toolCall("read", { file_path: fx.ws.path("notes.md") }),
      reply()
        .toolCall("write", { file_path: fx.ws.path("out.md"), content: "written by the editor\n" })
        .expect((req) => assert.match(String(req.body.messages.at(-1)?.content), /line two/)),
      textReply("done"),
    );
    const turn = await fx.agent.prompt(sessionId, "copy");
    assert.equal(turn.stopReason, "end_turn");
    assert.equal(await fx.ws.read("out.md"), "written by the editor\n");
    assert.ok(fx.agent.fsCalls.includes(`read ${fx.ws.path("notes.md")}`), fx.agent.fsCalls.join());
    assert.ok(fx.agent.fsCalls.includes(`write ${fx.ws.path("out.md")}`), fx.agent.fsCalls.join());
    const diff = turn.updates.find(
      (u) => u.sessionUpdate === "tool_call_update" && u.content?.some((c) => c.type === "diff"),
    );
    assert.ok(diff, "the write shows a diff");
    fx.mock.assertDone();
  });
});
