import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { after, describe, test } from "node:test";
import { methods, type SessionUpdate } from "@agentclientprotocol/sdk";
import { type MockLlm, startMockLlm, textReply, useAcpFixture } from "@crow/testkit";

type Usage = Extract<SessionUpdate, { sessionUpdate: "usage_update" }>;

function usageOf(updates: SessionUpdate[]): Usage {
  const usage = updates.filter((u): u is Usage => u.sessionUpdate === "usage_update").at(-1);
  assert.ok(usage, "a usage_update was sent");
  return usage;
}

describe("crow acp with a config.yaml", () => {
  let two: MockLlm;
  const fx = useAcpFixture({
    // No OPENAI_* and no CROW_MODEL: everything comes from the config home.
    agent: { env: { CROW_MODEL: "", OPENAI_BASE_URL: "" } },
    async prepare({ mock: one, crowHome }) {
      two = await startMockLlm();
      await writeFile(
        path.join(crowHome, "config.yaml"),
        [
          "providers:",
          `  one: { base_url: "${one.url}", api_key: "\${ONE_KEY}" }`,
          `  two: { base_url: "${two.url}", api_key: key-two }`,
          "models:",
          "  small:",
          "    provider: one",
          "    model: mock-model",
          "    context_window: 32000",
          "    price: { input: 1, output: 2, currency: EUR }",
          "  large: { provider: two, model: org/large, context_window: 200000, max_tokens: 456 }",
          // Upstream's key: the request's max_tokens for every model that does not set its own.
          "MAX_TOKENS: 123",
        ].join("\n"),
      );
      await writeFile(path.join(crowHome, ".env"), "ONE_KEY=key-one\n");
    },
  });
  after(() => two.close());

  test("every configured model is in the model select, gets its max_tokens; usage_update carries its window and cumulative cost", async () => {
    const session = await fx.agent.newSession(fx.ws.dir);
    const select = session.configOptions?.find((o) => o.id === "model");
    assert.ok(select?.type === "select");
    assert.equal(select.category, "model");
    assert.equal(select.currentValue, "small");
    assert.deepEqual(
      select.options.map((o) => ("value" in o ? [o.value, o.name] : [])),
      [
        ["small", "small"],
        ["large", "large"],
      ],
    );

    const sentTo =
      (name: string, model: string, key: string, maxTokens: number) =>
      (req: { body: { model?: string; max_tokens?: unknown }; headers: Record<string, unknown> }) => {
        assert.equal(req.body.model, model, `${name} gets the provider's model id`);
        assert.equal(req.headers.authorization, `Bearer ${key}`, `${name} gets its provider's key`);
        assert.equal(req.body.max_tokens, maxTokens, `${name} gets its max_tokens`);
      };
    fx.mock.script(
      textReply("first")
        .usage(1000, 500)
        .expect(sentTo("one", "mock-model", "key-one", 123)),
      textReply("second").usage(1000, 500),
    );
    const first = await fx.agent.prompt(session.sessionId, "hello");
    assert.equal(first.stopReason, "end_turn");
    assert.deepEqual(
      { ...usageOf(first.updates) },
      { sessionUpdate: "usage_update", used: 1500, size: 32_000, cost: { amount: 0.002, currency: "EUR" } },
    );
    const second = await fx.agent.prompt(session.sessionId, "again");
    assert.deepEqual(usageOf(second.updates).cost, { amount: 0.004, currency: "EUR" }, "the cost is cumulative");
    fx.mock.assertDone();

    // Switching the model switches the provider: base URL, key and model id.
    const answer = await fx.agent.agent.request(methods.agent.session.setConfigOption, {
      sessionId: session.sessionId,
      configId: "model",
      value: "large",
    });
    assert.equal(answer.configOptions.find((o) => o.id === "model")?.currentValue, "large");
    two.script(
      textReply("big")
        .usage(3000, 10)
        .expect(sentTo("two", "org/large", "key-two", 456)),
    );
    const third = await fx.agent.prompt(session.sessionId, "bigger");
    assert.equal(third.stopReason, "end_turn");
    const usage = usageOf(third.updates);
    assert.equal(usage.size, 200_000);
    assert.equal(usage.cost, undefined, "no price configured for large");
    two.assertDone();
    assert.equal(fx.mock.requests.length, 2);
  });
});
