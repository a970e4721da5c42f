/** The configured models at run time: routing to providers, costs. */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { LlmClientOptions, LlmRequest, LlmResult } from "@crow/core";
import { type AgentConfig, CostMeter, createModelRouter, loadConfig, usageCost } from "../src/config/index.js";
import { configHomes } from "./config-helpers.js";

const homes = configHomes();

describe("models at run time", () => {
  function twoProviders(): AgentConfig {
    return {
      ...loadConfig({ HOME: homes.plain() }),
      providers: {
        a: { name: "a", baseURL: "http://a/v1", apiKey: "ka" },
        b: { name: "b", baseURL: "http://b/v1" },
      },
      models: [
        { name: "fast", id: "org/fast-1", provider: "a", contextWindow: 1000 },
        { name: "slow", id: "slow", provider: "b", contextWindow: 2000 },
      ],
    };
  }

  test("the router sends each model to its provider with its id; one client per provider, made lazily", async () => {
    const made: LlmClientOptions[] = [];
    const seen: Array<{ provider: string; model: string }> = [];
    const router = createModelRouter(twoProviders(), (options) => {
      made.push(options);
      return {
        async stream(request: LlmRequest): Promise<LlmResult> {
          seen.push({ provider: options.baseURL, model: request.model });
          return {
            ok: true,
            message: { role: "assistant", content: "" },
            toolCalls: [],
            finishReason: "stop",
            attempts: 1,
          };
        },
      };
    });
    assert.equal(made.length, 0);
    await router.stream({ model: "fast", messages: [] });
    await router.stream({ model: "slow", messages: [] });
    await router.stream({ model: "fast", messages: [] });
    assert.deepEqual(seen, [
      { provider: "http://a/v1", model: "org/fast-1" },
      { provider: "http://b/v1", model: "slow" },
      { provider: "http://a/v1", model: "org/fast-1" },
    ]);
    assert.deepEqual(
      made.map((m) => [m.baseURL, m.apiKey]),
      [
        ["http://a/v1", "ka"],
        ["http://b/v1", undefined],
      ],
    );
    const unknown = await router.stream({ model: "gone", messages: [] });
    assert.ok(!unknown.ok);
    assert.match(unknown.error.message, /Model "gone" is not configured \(known: fast, slow\)/);
  });

  test("cost per million tokens, cached prompt tokens at their own price, cumulative per session", () => {
    const price = { input: 2, output: 10, cachedInput: 0.5, currency: "EUR" };
    const usage = { promptTokens: 1000, completionTokens: 100, totalTokens: 1100, cachedTokens: 400 };
    assert.equal(usageCost(price, usage), (600 * 2 + 400 * 0.5 + 100 * 10) / 1e6);
    const meter = new CostMeter();
    const model = { name: "m", id: "m", provider: "p", contextWindow: 1, price };
    meter.add(model, usage);
    assert.deepEqual(meter.add(model, usage), { amount: (2 * 2400) / 1e6, currency: "EUR" });
    assert.equal(meter.add({ ...model, price: undefined }, usage), undefined);
  });
});
