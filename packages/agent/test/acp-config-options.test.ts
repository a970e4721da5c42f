import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { methods, type SessionConfigOption, type SessionUpdate } from "@agentclientprotocol/sdk";
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

const current = (options: readonly SessionConfigOption[] | null | undefined, id: string) =>
  options?.find((o) => o.id === id)?.currentValue;

/** The config_option_update updates of a session, as `[mode, model]` pairs. */
const selectorUpdates = (updates: readonly SessionUpdate[]) =>
  updates.flatMap((u) =>
    u.sessionUpdate === "config_option_update"
      ? [[current(u.configOptions, "mode"), current(u.configOptions, "model")]]
      : [],
  );

describe("crow acp: mode and model as session config options", () => {
  let mock: MockLlm;
  let ws: TempWorkspace;
  let agent: AcpTestClient;

  before(async () => {
    mock = await startMockLlm({ models: ["mock-model", "other-model"] });
    ws = await tempWorkspace();
    agent = await spawnAcpAgent({ llmUrl: mock.url, models: ["mock-model", "other-model"], permissions: ["reject"] });
  });
  after(async () => {
    await agent.close();
    await mock.close();
    await ws.cleanup();
  });

  test("the mode is a category-mode select next to the model, and the legacy modes stay", async () => {
    const session = await agent.newSession(ws.dir);
    const mode = session.configOptions?.find((o) => o.category === "mode");
    assert.ok(mode && mode.type === "select", "a mode select");
    assert.equal(mode.id, "mode");
    assert.equal(mode.currentValue, "code");
    assert.deepEqual(
      mode.options.map((o) => ("value" in o ? o.value : "")),
      ["code", "ask", "read-only"],
    );
    assert.equal(current(session.configOptions, "model"), "mock-model");
    assert.equal(session.modes?.currentModeId, "code");
    assert.deepEqual(
      session.modes?.availableModes.map((m) => m.id),
      ["code", "ask", "read-only"],
    );
  });

  test("every change from either side is sent as config_option_update (and current_mode_update for modes)", async () => {
    const { sessionId } = await agent.newSession(ws.dir);
    const seen = () => agent.updates(sessionId);

    // The editor picks a mode through the config option: it takes effect (ask mode asks before a write).
    const answer = await agent.agent.request(methods.agent.session.setConfigOption, {
      sessionId,
      configId: "mode",
      value: "ask",
    });
    assert.equal(current(answer.configOptions, "mode"), "ask");
    await agent.waitForUpdate(sessionId, (u) => u.sessionUpdate === "config_option_update", true);
    assert.ok(seen().some((u) => u.sessionUpdate === "current_mode_update" && u.currentModeId === "ask"));

    // The legacy set_mode (an older client, or Zed's mode picker without config options).
    await agent.agent.request(methods.agent.session.setMode, { sessionId, modeId: "read-only" });
    // The model.
    await agent.agent.request(methods.agent.session.setConfigOption, {
      sessionId,
      configId: "model",
      value: "other-model",
    });
    await agent.waitForUpdate(
      sessionId,
      (u) => u.sessionUpdate === "config_option_update" && current(u.configOptions, "model") === "other-model",
      true,
    );
    assert.deepEqual(selectorUpdates(seen()), [
      ["ask", "mock-model"],
      ["read-only", "mock-model"],
      ["read-only", "other-model"],
    ]);

    // Back to ask through the config option, then a write is asked about (and rejected).
    await agent.agent.request(methods.agent.session.setConfigOption, { sessionId, configId: "mode", value: "ask" });
    mock.script(
      reply().toolCall("write", { file_path: ws.path("x.txt"), content: "x" }),
      textReply("Not written.").expect((req) => assert.equal(req.body.model, "other-model")),
    );
    const turn = await agent.prompt(sessionId, "write x.txt");
    assert.equal(turn.stopReason, "end_turn");
    assert.equal(agent.permissionRequests.length, 1);
    mock.assertDone();
  });

  test("bad values are -32602 errors that name what is known", async () => {
    const { sessionId } = await agent.newSession(ws.dir);
    await assert.rejects(
      agent.agent.request(methods.agent.session.setConfigOption, { sessionId, configId: "mode", value: "yolo" }),
      (error: { code?: number; message?: string }) => error.code === -32602,
    );
    assert.match(agent.stdoutLines.findLast((l) => l.includes('"error"')) ?? "", /unknown mode \\"yolo\\"/);
    await assert.rejects(
      agent.agent.request(methods.agent.session.setConfigOption, { sessionId, configId: "effort", value: "high" }),
      (error: { code?: number }) => error.code === -32602,
    );
    assert.match(
      agent.stdoutLines.findLast((l) => l.includes('"error"')) ?? "",
      /unknown config option \\"effort\\" \(model, mode\)/,
    );
  });
});
