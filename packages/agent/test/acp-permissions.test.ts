import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { methods } from "@agentclientprotocol/sdk";
import { type PermissionChoice, reply, textReply, useAcpFixture } from "@crow/testkit";

describe("crow acp: ask and read-only modes", () => {
  const answers: PermissionChoice[] = [];
  const fx = useAcpFixture({ agent: { permissions: () => answers.shift() ?? "reject" } });

  async function session(mode: string) {
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    await fx.agent.agent.request(methods.agent.session.setMode, { sessionId, modeId: mode });
    const update = await fx.agent.waitForUpdate(sessionId, (u) => u.sessionUpdate === "current_mode_update", true);
    assert.ok(update.sessionUpdate === "current_mode_update");
    assert.equal(update.currentModeId, mode);
    return sessionId;
  }

  test("ask: allow once runs the call and asks again next time", async () => {
    const sessionId = await session("ask");
    answers.push("allow_once", "allow_once");
    const asked = fx.agent.permissionRequests.length;
    fx.mock.script(
      reply().toolCall("write", { file_path: fx.ws.path("once.txt"), content: "1" }),
      reply().toolCall("write", { file_path: fx.ws.path("once.txt"), content: "2" }),
      textReply("written twice"),
    );
    assert.equal((await fx.agent.prompt(sessionId, "write twice")).stopReason, "end_turn");
    assert.equal(await fx.ws.read("once.txt"), "2");
    const requests = fx.agent.permissionRequests.slice(asked);
    assert.equal(requests.length, 2);
    const first = requests[0]?.request;
    assert.equal(first?.toolCall.kind, "edit");
    assert.deepEqual(first?.toolCall.rawInput, { file_path: fx.ws.path("once.txt"), content: "1" });
    assert.deepEqual(
      first?.options.map((o) => o.kind),
      ["allow_once", "allow_always", "reject_once"],
    );
    fx.mock.assertDone();
  });

  test("ask: allow always is remembered for the session; reads never ask", async () => {
    const sessionId = await session("ask");
    answers.push("allow_always");
    const asked = fx.agent.permissionRequests.length;
    fx.mock.script(
      reply().toolCall("write", { file_path: fx.ws.path("always.txt"), content: "a" }),
      reply().toolCall("read", { file_path: fx.ws.path("always.txt") }),
      reply().toolCall("write", { file_path: fx.ws.path("always.txt"), content: "b" }),
      textReply("ok"),
    );
    assert.equal((await fx.agent.prompt(sessionId, "go")).stopReason, "end_turn");
    assert.equal(await fx.ws.read("always.txt"), "b");
    assert.equal(fx.agent.permissionRequests.length - asked, 1);
    fx.mock.assertDone();
  });

  test("ask: reject tells the model and does not run the call", async () => {
    const sessionId = await session("ask");
    answers.push("reject");
    fx.mock.script(
      reply().toolCall("terminal", { command: "touch rejected.txt" }),
      textReply("understood").expect((req) => {
        const tool = req.body.messages.at(-1);
        assert.equal(tool?.role, "tool");
        assert.match(String(tool?.content), /rejected/);
      }),
    );
    const turn = await fx.agent.prompt(sessionId, "touch it");
    assert.equal(turn.stopReason, "end_turn");
    await assert.rejects(fx.ws.read("rejected.txt"));
    const failed = turn.updates.find((u) => u.sessionUpdate === "tool_call_update" && u.status === "failed");
    assert.ok(failed, "the rejected call is shown as failed");
    fx.mock.assertDone();
  });

  test("read-only: mutating tools are refused with a clear result, reads run, nobody is asked", async () => {
    await fx.ws.write("ro.txt", "keep me\n");
    const sessionId = await session("read-only");
    const asked = fx.agent.permissionRequests.length;
    fx.mock.script(
      reply()
        .toolCall("read", { file_path: fx.ws.path("ro.txt") })
        .toolCall("write", { file_path: fx.ws.path("ro.txt"), content: "changed" }),
      textReply("I can only read here.").expect((req) => {
        const tools = req.body.messages.filter((m) => m.role === "tool").map((m) => String(m.content));
        assert.match(tools[0] ?? "", /keep me/);
        assert.match(tools[1] ?? "", /read-only mode/);
      }),
    );
    assert.equal((await fx.agent.prompt(sessionId, "change it")).stopReason, "end_turn");
    assert.equal(await fx.ws.read("ro.txt"), "keep me\n");
    assert.equal(fx.agent.permissionRequests.length, asked);
    fx.mock.assertDone();
  });

  test("an unknown mode is an invalid-params error", async () => {
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    await assert.rejects(
      fx.agent.agent.request(methods.agent.session.setMode, { sessionId, modeId: "yolo" }),
      (error: { code?: number; message?: string }) => error.code === -32602,
    );
  });
});
