import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { loadConfig } from "../src/config/index.js";

// The session runner moved to core with the SDK: packages/core/test/session-runner.test.ts.
describe("config from the environment", () => {
  test("defaults and model list", () => {
    const c = loadConfig({ CROW_MODELS: "a, b", OPENAI_API_KEY: "k" });
    assert.equal(c.model, "a");
    assert.deepEqual(
      c.models.map((m) => m.name),
      ["a", "b"],
    );
    assert.equal(c.providers.default?.baseURL, "https://api.openai.com/v1");
    assert.equal(c.maxStepsPerTurn, 100);
    const d = loadConfig({ CROW_MODEL: "x", CROW_MODELS: "a", CROW_MAX_STEPS: "7" });
    assert.deepEqual(
      d.models.map((m) => m.name),
      ["x", "a"],
    );
    assert.equal(d.providers.default, undefined);
    assert.equal(d.maxStepsPerTurn, 7);
  });

  test("a malformed number names the variable", () => {
    assert.throws(() => loadConfig({ CROW_MAX_STEPS: "lots" }), /CROW_MAX_STEPS/);
  });
});
