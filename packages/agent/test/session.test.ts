import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { LlmClient, LlmRequest, LlmResult, LoopEvent } from "@crow/core";
import { loadConfig } from "../src/config/index.js";
import { Session } from "../src/session/session.js";
import type { ToolRouter } from "../src/tools/types.js";

const noTools: ToolRouter = {
  definitions: () => [],
  execute: async () => ({ content: "" }),
  servers: () => [],
  failures: () => [],
  close: async () => {},
};

function llm(text: string, seen: LlmRequest[] = []): LlmClient {
  return {
    async stream(request, options): Promise<LlmResult> {
      seen.push(request);
      options?.onEvent?.({ type: "text_delta", text });
      return {
        ok: true,
        message: { role: "assistant", content: text },
        toolCalls: [],
        finishReason: "stop",
        attempts: 1,
      };
    },
  };
}

function session(client: LlmClient) {
  const config = { ...loadConfig({ OPENAI_BASE_URL: "http://127.0.0.1:1/v1", CROW_MODEL: "m" }) };
  return new Session({ id: "s1", cwd: "/tmp", config, llm: client, tools: noTools });
}

describe("session runner", () => {
  test("a cancel that lands after the loop finished still answers cancelled", async () => {
    const s = session(llm("done"));
    const outcome = await s.runTurn("hi", (event: LoopEvent) => {
      // The loop has already decided end_turn when its stop event is relayed; the cancel races in right then.
      if (event.type === "stop") {
        assert.equal(event.reason, "end_turn");
        s.cancel();
      }
    });
    assert.equal(outcome.reason, "cancelled");
    assert.equal(s.running, false);
  });

  test("history accumulates user and assistant messages; the system prompt is sent first", async () => {
    const seen: LlmRequest[] = [];
    const s = session(llm("ok", seen));
    await s.runTurn("one", () => {});
    await s.runTurn("two", () => {});
    assert.deepEqual(
      s.history.map((m) => m.role),
      ["user", "assistant", "user", "assistant"],
    );
    assert.equal(seen[1]?.messages[0]?.role, "system");
    assert.match(String(seen[1]?.messages[0]?.content), /Workspace: \/tmp/);
    assert.equal(seen[1]?.messages.length, 4);
  });

  test("a second turn while one runs is refused", async () => {
    let release: () => void = () => {};
    const slow: LlmClient = {
      stream: () =>
        new Promise((resolve) => {
          release = () =>
            resolve({
              ok: true,
              message: { role: "assistant", content: "x" },
              toolCalls: [],
              finishReason: "stop",
              attempts: 1,
            });
        }),
    };
    const s = session(slow);
    const first = s.runTurn("a", () => {});
    await assert.rejects(
      s.runTurn("b", () => {}),
      /already running/,
    );
    release();
    assert.equal((await first).reason, "end_turn");
  });
});

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
