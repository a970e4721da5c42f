import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { methods, type SessionConfigOption, type SessionUpdate } from "@agentclientprotocol/sdk";
import { reply, textReply, useAcpFixture } from "@crow/testkit";

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
  const fx = useAcpFixture({
    mock: { models: ["mock-model", "other-model"] },
    agent: { models: ["mock-model", "other-model"], permissions: ["reject"] },
  });

  test("the mode is a category-mode select next to the model, and the legacy modes stay", async () => {
    const session = await fx.agent.newSession(fx.ws.dir);
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
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    const seen = () => fx.agent.updates(sessionId);

    // The editor picks a mode through the config option: it takes effect (ask mode asks before a write).
    const answer = await fx.agent.agent.request(methods.agent.session.setConfigOption, {
      sessionId,
      configId: "mode",
      value: "ask",
    });
    assert.equal(current(answer.configOptions, "mode"), "ask");
    await fx.agent.waitForUpdate(sessionId, (u) => u.sessionUpdate === "config_option_update", true);
    assert.ok(seen().some((u) => u.sessionUpdate === "current_mode_update" && u.currentModeId === "ask"));

    // The legacy set_mode (an older client, or Zed's mode picker without config options).
    await fx.agent.agent.request(methods.agent.session.setMode, { sessionId, modeId: "read-only" });
    // The model.
    await fx.agent.agent.request(methods.agent.session.setConfigOption, {
      sessionId,
      configId: "model",
      value: "other-model",
    });
    await fx.agent.waitForUpdate(
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
    await fx.agent.agent.request(methods.agent.session.setConfigOption, {
      sessionId,
      configId: "mode",
      value: "ask",
    });
    fx.mock.script(
      reply().toolCall("write", { file_path: fx.ws.path("x.txt"), content: "x" }),
      textReply("Not written.").expect((req) => assert.equal(req.body.model, "other-model")),
    );
    const turn = await fx.agent.prompt(sessionId, "write x.txt");
    assert.equal(turn.stopReason, "end_turn");
    assert.equal(fx.agent.permissionRequests.length, 1);
    fx.mock.assertDone();
  });

  test("bad values are -32602 errors that name what is known", async () => {
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    await assert.rejects(
      fx.agent.agent.request(methods.agent.session.setConfigOption, {
        sessionId,
        configId: "mode",
        value: "yolo",
      }),
      (error: { code?: number; message?: string }) => error.code === -32602,
    );
    assert.match(fx.agent.stdoutLines.findLast((l) => l.includes('"error"')) ?? "", /unknown mode \\"yolo\\"/);
    await assert.rejects(
      fx.agent.agent.request(methods.agent.session.setConfigOption, {
        sessionId,
        configId: "effort",
        value: "high",
      }),
      (error: { code?: number }) => error.code === -32602,
    );
    assert.match(
      fx.agent.stdoutLines.findLast((l) => l.includes('"error"')) ?? "",
      /unknown config option \\"effort\\" \(model, mode(, sandbox)?\)/,
    );
  });
});
