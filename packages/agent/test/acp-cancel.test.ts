import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { methods } from "@agentclientprotocol/sdk";
import { reply, textReply, useAcpFixture } from "@crow/testkit";

/** The next prompt's request must carry a valid history (the mock checks the tool-call invariant on every request). */
function expectValidFollowUp() {
  return textReply("Back again.").expect((req) => {
    assert.equal(req.body.messages.at(-1)?.role, "user");
    assert.equal(req.body.messages.at(-1)?.content, "are you there?");
  });
}

describe("crow acp: session/cancel always answers cancelled and leaves a valid history", () => {
  let resolvePermission: (() => void) | undefined;
  const fx = useAcpFixture({
    agent: {
      permissions: () => {
        resolvePermission?.();
        return "wait";
      },
    },
  });

  test("during streaming", async () => {
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    fx.mock.script(reply().text("Thinking about it").hang(), expectValidFollowUp());
    const prompt = fx.agent.prompt(sessionId, "write a long essay");
    await fx.agent.waitForUpdate(sessionId, (u) => u.sessionUpdate === "agent_message_chunk");
    await fx.agent.cancel(sessionId);
    const turn = await prompt;
    assert.equal(turn.stopReason, "cancelled");

    const next = await fx.agent.prompt(sessionId, "are you there?");
    assert.equal(next.stopReason, "end_turn");
    // The partial text the user saw is kept in the history.
    const messages = fx.mock.requests.at(-1)?.body.messages ?? [];
    assert.equal(messages.at(-2)?.role, "assistant");
    assert.equal(messages.at(-2)?.content, "Thinking about it");
    fx.mock.assertDone();
  });

  test("during a tool call", async () => {
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    fx.mock.script(reply().toolCall("terminal", { command: "sleep 30" }), expectValidFollowUp());
    const started = Date.now();
    const prompt = fx.agent.prompt(sessionId, "wait a while");
    const running = await fx.agent.waitForUpdate(
      sessionId,
      (u) => u.sessionUpdate === "tool_call_update" && u.status === "in_progress",
    );
    await fx.agent.cancel(sessionId);
    const turn = await prompt;
    assert.equal(turn.stopReason, "cancelled");
    assert.ok(Date.now() - started < 25_000, "the turn did not wait for the command");
    assert.ok(running.sessionUpdate === "tool_call_update");
    const final = turn.updates.findLast(
      (u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === running.toolCallId && u.status,
    );
    assert.ok(final?.sessionUpdate === "tool_call_update");
    assert.equal(final.status, "failed");

    const next = await fx.agent.prompt(sessionId, "are you there?");
    assert.equal(next.stopReason, "end_turn");
    const tool = fx.mock.requests.at(-1)?.body.messages.find((m) => m.role === "tool");
    assert.match(String(tool?.content), /cancel/i);
    fx.mock.assertDone();
  });

  test("during a permission request", async () => {
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    await fx.agent.agent.request(methods.agent.session.setMode, { sessionId, modeId: "ask" });
    fx.mock.script(reply().toolCall("write", { file_path: fx.ws.path("x.txt"), content: "x" }), expectValidFollowUp());
    const asked = new Promise<void>((resolve) => {
      resolvePermission = resolve;
    });
    const prompt = fx.agent.prompt(sessionId, "write x");
    await asked;
    await fx.agent.cancel(sessionId);
    const turn = await prompt;
    assert.equal(turn.stopReason, "cancelled");
    await assert.rejects(fx.ws.read("x.txt"), "the file was not written");

    const next = await fx.agent.prompt(sessionId, "are you there?");
    assert.equal(next.stopReason, "end_turn");
    fx.mock.assertDone();
  });

  test("/stop cancels a running turn of the session", async () => {
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    fx.mock.script(reply().text("Working").hang());
    const prompt = fx.agent.prompt(sessionId, "go");
    await fx.agent.waitForUpdate(sessionId, (u) => u.sessionUpdate === "agent_message_chunk");
    const stop = await fx.agent.prompt(sessionId, "/stop");
    assert.equal(stop.stopReason, "end_turn");
    assert.equal((await prompt).stopReason, "cancelled");
    fx.mock.assertDone();
  });

  test("a cancel with nothing running is harmless", async () => {
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    await fx.agent.cancel(sessionId);
    fx.mock.script(textReply("fine"));
    assert.equal((await fx.agent.prompt(sessionId, "hi")).stopReason, "end_turn");
    fx.mock.assertDone();
  });
});
