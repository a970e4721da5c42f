/** config.yaml and the environment: the environment wins for what it names, and says so. */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { compactionThresholdOf, loadConfig } from "../src/config/index.js";
import { configHomes } from "./config-helpers.js";

const homes = configHomes();
const crow = homes.crow;

describe("config.yaml and the environment: the environment wins for what it names, and says so", () => {
  const yaml = [
    "providers:",
    "  local: { base_url: 'http://127.0.0.1:11434/v1' }",
    "models:",
    "  coder: { provider: local, model: qwen3-coder, context_window: 32768 }",
    "  small: { provider: local, model: qwen3-small }",
    "default_model: coder",
  ].join("\n");

  test("OPENAI_BASE_URL in the environment sends the default model there, with a notice", async () => {
    const { env } = await crow(yaml);
    const config = loadConfig({ ...env, OPENAI_BASE_URL: "http://127.0.0.1:18099/v1/" });
    assert.equal(config.model, "qwen3-coder");
    const model = config.models[0];
    assert.deepEqual(model, { name: "qwen3-coder", id: "qwen3-coder", provider: "default", contextWindow: 32768 });
    assert.equal(config.providers.default?.baseURL, "http://127.0.0.1:18099/v1");
    assert.equal(config.providers.default?.urlFrom, "OPENAI_BASE_URL");
    // The configured models stay in the picker.
    assert.deepEqual(
      config.models.map((m) => m.name),
      ["qwen3-coder", "coder", "small"],
    );
    assert.deepEqual(config.notices, [
      'OPENAI_BASE_URL is set in the environment: model "qwen3-coder" at http://127.0.0.1:18099/v1 instead of the default model "coder" of ~/.crow/config.yaml (unset OPENAI_BASE_URL to use ~/.crow/config.yaml)',
    ]);
  });

  test("with CROW_MODEL too, that model runs at the environment's URL", async () => {
    const { env } = await crow(yaml);
    const config = loadConfig({ ...env, OPENAI_BASE_URL: "http://127.0.0.1:18099/v1", CROW_MODEL: "llama3.1" });
    assert.equal(config.model, "llama3.1");
    assert.equal(config.models[0]?.provider, "default");
    assert.match(config.notices[0] ?? "", /model "llama3\.1" at http:\/\/127\.0\.0\.1:18099\/v1 instead of/);
  });

  test("CROW_MODEL alone picks among the configured models, with a notice when it differs from default_model", async () => {
    const { env } = await crow(yaml);
    const config = loadConfig({ ...env, CROW_MODEL: "small" });
    assert.equal(config.model, "small");
    assert.equal(config.models.find((m) => m.name === "small")?.provider, "local");
    assert.deepEqual(config.notices, [
      'CROW_MODEL is set in the environment: model "small" instead of "coder" of ~/.crow/config.yaml',
    ]);
    assert.deepEqual(loadConfig({ ...env, CROW_MODEL: "coder" }).notices, []);
  });

  test("the environment's model keeps what config.yaml says of the model it stands for: window and levels", async () => {
    const { env } = await crow(
      [
        "providers:",
        "  local: { base_url: 'http://127.0.0.1:11434/v1' }",
        "models:",
        "  mock-model: { provider: local, context_window: 10000, reasoning_effort: [low, high] }",
        "default_model: mock-model",
      ].join("\n"),
    );
    const config = loadConfig({ ...env, OPENAI_BASE_URL: "http://127.0.0.1:18099/v1" });
    assert.deepEqual(config.models, [
      {
        name: "mock-model",
        id: "mock-model",
        provider: "default",
        contextWindow: 10000,
        reasoningEfforts: ["low", "high"],
      },
    ]);
    assert.equal(compactionThresholdOf(config, "mock-model"), 8000);
    // The same name on both sides: the notice does not say "model X instead of the default model X".
    assert.deepEqual(config.notices, [
      'OPENAI_BASE_URL is set in the environment: model "mock-model" at http://127.0.0.1:18099/v1 instead of its provider in ~/.crow/config.yaml (unset OPENAI_BASE_URL to use ~/.crow/config.yaml)',
    ]);
  });

  test("CROW_CONTEXT_WINDOW counts for the compaction threshold of the environment's model", async () => {
    const { env } = await crow();
    const base = { ...env, OPENAI_BASE_URL: "http://127.0.0.1:1/v1" };
    const given = loadConfig({ ...base, CROW_MODEL: "m", CROW_CONTEXT_WINDOW: "10000" });
    assert.equal(compactionThresholdOf(given, "m"), 8000);
    // Nobody gave a window: the 120 000 default, not 80 % of the assumed 128 000.
    assert.equal(compactionThresholdOf(loadConfig({ ...base, CROW_MODEL: "m" }), "m"), 120_000);
  });

  test("OPENAI_BASE_URL in .env does not override config.yaml (both are the saved setup): no notice", async () => {
    const { env } = await crow(yaml, "OPENAI_BASE_URL=http://127.0.0.1:18099/v1\n");
    const config = loadConfig(env);
    assert.equal(config.model, "coder");
    assert.equal(config.providers.default, undefined);
    assert.deepEqual(config.notices, []);
  });
});
