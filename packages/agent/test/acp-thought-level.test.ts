import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, test } from "node:test";
import { methods, type SessionConfigOption, type SessionUpdate } from "@agentclientprotocol/sdk";
import { type CapturedRequest, textReply, useAcpFixture } from "@crow/testkit";

const thought = (options: readonly SessionConfigOption[] | null | undefined) =>
  options?.find((o) => o.id === "thought_level");

/** The thought level each config_option_update showed (null: no such option), in order. */
const thoughtUpdates = (updates: readonly SessionUpdate[]) =>
  updates.flatMap((u) =>
    u.sessionUpdate === "config_option_update" ? [thought(u.configOptions)?.currentValue ?? null] : [],
  );

/** The request carries `reasoning_effort: effort` (undefined: no such field). */
const effortIs = (effort: string | undefined) => (req: CapturedRequest) =>
  assert.equal(req.body.reasoning_effort, effort, `reasoning_effort ${effort ?? "absent"}`);

describe("crow acp: the thought level (reasoning_effort) as a session config option", () => {
  const fx = useAcpFixture({
    // Models from the config home only: `thinker` declares its reasoning_effort levels, `plain` none.
    agent: { env: { CROW_MODEL: "", OPENAI_BASE_URL: "" } },
    async prepare({ mock, crowHome }) {
      await writeFile(
        path.join(crowHome, "config.yaml"),
        [
          "providers:",
          `  local: { base_url: "${mock.url}" }`,
          "models:",
          "  thinker: { provider: local, model: mock-model, reasoning_effort: [low, medium, high] }",
          "  plain: { provider: local, model: mock-model }",
        ].join("\n"),
      );
    },
  });

  test("offered for a reasoning model, sent as reasoning_effort once chosen, gone for a model without it", async () => {
    const session = await fx.agent.newSession(fx.ws.dir);
    const { sessionId } = session;
    const select = thought(session.configOptions);
    assert.ok(select?.type === "select", "a thought level select");
    assert.equal(select.category, "thought_level");
    assert.equal(select.currentValue, "default");
    assert.deepEqual(
      select.options.map((o) => ("value" in o ? o.value : "")),
      ["default", "low", "medium", "high"],
    );

    fx.mock.script(textReply("plain answer").expect(effortIs(undefined)));
    assert.equal((await fx.agent.prompt(sessionId, "hi")).stopReason, "end_turn");

    const answer = await fx.agent.agent.request(methods.agent.session.setConfigOption, {
      sessionId,
      configId: "thought_level",
      value: "high",
    });
    assert.equal(thought(answer.configOptions)?.currentValue, "high");
    fx.mock.script(textReply("thought hard").expect(effortIs("high")));
    assert.equal((await fx.agent.prompt(sessionId, "think")).stopReason, "end_turn");

    // A model without levels: no thought level option, no reasoning_effort in its requests.
    const plain = await fx.agent.agent.request(methods.agent.session.setConfigOption, {
      sessionId,
      configId: "model",
      value: "plain",
    });
    assert.equal(thought(plain.configOptions), undefined);
    fx.mock.script(textReply("no reasoning").expect(effortIs(undefined)));
    assert.equal((await fx.agent.prompt(sessionId, "again")).stopReason, "end_turn");
    await assert.rejects(
      fx.agent.agent.request(methods.agent.session.setConfigOption, {
        sessionId,
        configId: "thought_level",
        value: "low",
      }),
      /unknown config option "thought_level" \(model, mode, sandbox\)/,
    );

    // Back to the reasoning model: the session's choice applies again.
    await fx.agent.agent.request(methods.agent.session.setConfigOption, {
      sessionId,
      configId: "model",
      value: "thinker",
    });
    fx.mock.script(textReply("hard again").expect(effortIs("high")));
    assert.equal((await fx.agent.prompt(sessionId, "think again")).stopReason, "end_turn");

    await fx.agent.waitForUpdate(
      sessionId,
      (u) => u.sessionUpdate === "config_option_update" && thought(u.configOptions)?.currentValue === "high",
      true,
    );
    // Each change was announced: the level, the switch to plain (no option), the switch back.
    assert.deepEqual(thoughtUpdates(fx.agent.updates(sessionId)), ["high", null, "high"]);
    fx.mock.assertDone();
  });

  test("an unknown level is refused with the valid ones; the choice is stored with the session", async () => {
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    await assert.rejects(
      fx.agent.agent.request(methods.agent.session.setConfigOption, {
        sessionId,
        configId: "thought_level",
        value: "extreme",
      }),
      /unknown thought level "extreme" \(default, low, medium, high\)/,
    );
    await fx.agent.agent.request(methods.agent.session.setConfigOption, {
      sessionId,
      configId: "thought_level",
      value: "low",
    });
    fx.mock.script(textReply("stored").expect(effortIs("low")));
    assert.equal((await fx.agent.prompt(sessionId, "remember")).stopReason, "end_turn");

    // Another agent process loads the session (closed here first: one live owner): the same level is shown and sent.
    await fx.agent.agent.request(methods.agent.session.close, { sessionId });
    const second = await fx.spawn();
    try {
      const loaded = await second.agent.request(methods.agent.session.load, {
        sessionId,
        cwd: fx.ws.dir,
        mcpServers: [],
      });
      assert.equal(thought(loaded.configOptions)?.currentValue, "low");
      fx.mock.script(textReply("still low").expect(effortIs("low")));
      assert.equal((await second.prompt(sessionId, "after load")).stopReason, "end_turn");
      // Back to the provider's default: the field is no longer sent.
      await second.agent.request(methods.agent.session.setConfigOption, {
        sessionId,
        configId: "thought_level",
        value: "default",
      });
      fx.mock.script(textReply("default").expect(effortIs(undefined)));
      assert.equal((await second.prompt(sessionId, "default")).stopReason, "end_turn");
    } finally {
      await second.close();
    }
    fx.mock.assertDone();
  });
});
