import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { type CrowEvent, createRuntime, type LlmClient, type LlmRequest, type LlmResult } from "@crow/core";
import { defaultSystemPrompt } from "@crow/core/internal";

const quiet = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

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

async function session(client: LlmClient) {
  const crow = await createRuntime({
    llm: client,
    model: "m",
    store: false,
    systemPrompt: (cwd) => defaultSystemPrompt(cwd),
    logger: quiet,
  });
  return crow.newSession({ cwd: "/tmp" });
}

describe("session runner", () => {
  test("a cancel that lands after the loop finished still answers cancelled", async () => {
    const s = await session(llm("done"));
    const run = s.prompt("hi", {
      onEvent: (event: CrowEvent) => {
        // The loop has already decided end_turn when its stop event is relayed; the cancel races in right then.
        if (event.type === "stop") {
          assert.equal(event.reason, "end_turn");
          s.cancel();
        }
      },
    });
    assert.equal((await run.result).stopReason, "cancelled");
    assert.equal(s.running, false);
  });

  test("history accumulates user and assistant messages; the system prompt is sent first", async () => {
    const seen: LlmRequest[] = [];
    const s = await session(llm("ok", seen));
    await s.prompt("one").result;
    await s.prompt("two").result;
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
    const s = await session(slow);
    const first = s.prompt("a");
    await assert.rejects(s.prompt("b").result, /already running/);
    release();
    assert.equal((await first.result).stopReason, "end_turn");
  });

  test("breaking out of the iteration cancels the turn", async () => {
    const s = await session({
      stream: (_request, options) =>
        new Promise((resolve) => {
          options?.onEvent?.({ type: "text_delta", text: "partial" });
          options?.signal?.addEventListener("abort", () =>
            resolve({
              ok: false,
              error: { kind: "aborted", message: "aborted", retryable: false, attempts: 1 },
              partial: { content: "partial", reasoning: "" },
            }),
          );
        }),
    });
    const run = s.prompt("go");
    for await (const event of run) if (event.type === "text_delta") break;
    const result = await run.result;
    assert.equal(result.stopReason, "cancelled");
    assert.equal(result.text, "partial");
  });

  test("a subscriber gets the turn's events in the order the run yields them, with the session's own", async () => {
    const s = await session(llm("hello"));
    const subscribed: string[] = [];
    s.subscribe((event) => subscribed.push(event.type));
    const yielded: string[] = [];
    for await (const event of s.prompt("hi")) yielded.push(event.type);
    s.notify("after the turn");
    assert.deepEqual(yielded.slice(0, 2), ["request_start", "text_delta"]);
    assert.equal(yielded.at(-1), "stop");
    assert.deepEqual(subscribed, [...yielded, "notice"]);
  });
});
