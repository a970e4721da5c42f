import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { createLlmClient, createRuntime } from "@crow/core";
import { loopSettings } from "@crow/core/internal";
import { type MockLlm, reply, startMockLlm } from "@crow/testkit";

const quiet = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

describe("the loop's settings: one object from the runtime's options to every turn", () => {
  let mock: MockLlm;
  let dir: string;

  before(async () => {
    mock = await startMockLlm();
    dir = await mkdtemp(path.join(tmpdir(), "crow-loop-settings-"));
  });
  after(async () => {
    await mock.close();
    await rm(dir, { recursive: true, force: true });
  });

  test("createRuntime's maxStepsPerTurn and params reach the loop of a session's turn", async () => {
    const crow = await createRuntime({
      llm: createLlmClient({ baseURL: mock.url, retry: { maxRetries: 0 } }),
      model: "mock-model",
      store: false,
      home: dir,
      systemPrompt: "You are a test agent.",
      logger: quiet,
      maxStepsPerTurn: 1,
      params: { temperature: 0.25 },
    });
    try {
      const session = await crow.newSession({ cwd: dir });
      const first = mock.requests.length;
      mock.script(reply().toolCall("no_such_tool", {}));
      const result = await session.prompt("loop", { events: false }).result;
      assert.equal(result.stopReason, "max_turn_requests", "one request, then the step limit");
      assert.equal(mock.requests.length, first + 1);
      assert.equal(mock.requests[first]?.body.temperature, 0.25);
      mock.assertDone();
    } finally {
      await crow.close();
    }
  });

  test("loopSettings keeps the loop's fields of a larger object and nothing else", () => {
    const config = { maxStepsPerTurn: 7, home: "/somewhere", model: "m", params: undefined };
    assert.deepEqual(loopSettings(config), { maxStepsPerTurn: 7 });
  });
});
