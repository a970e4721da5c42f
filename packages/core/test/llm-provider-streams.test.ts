import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createLlmClient, type LlmClient, type LlmStreamEvent } from "@crow/core";
import {
  jsonCompletion,
  type MockLlm,
  PROVIDER_COMPLETIONS,
  PROVIDER_STREAMS,
  recordedReply,
  startMockLlm,
} from "@crow/testkit";

/** The client against each recorded provider shape (packages/testkit/src/provider-streams.ts). */
describe("LLM client against providers' real stream shapes", () => {
  let mock: MockLlm;
  let llm: LlmClient;
  before(async () => {
    mock = await startMockLlm();
    llm = createLlmClient({ baseURL: mock.url, retry: { maxRetries: 0 } });
  });
  after(() => mock.close());

  /** One request; returns the result and what a user would have seen stream by, as text and thoughts. */
  async function run() {
    const events: LlmStreamEvent[] = [];
    const result = await llm.stream(
      { model: "m", messages: [{ role: "user", content: "hi" }] },
      {
        onEvent: (e) => events.push(e),
      },
    );
    const shown = (type: "text_delta" | "reasoning_delta") =>
      events.map((e) => (e.type === type ? e.text : "")).join("");
    mock.assertDone();
    return { result, events, text: shown("text_delta"), thoughts: shown("reasoning_delta") };
  }

  test("Mistral: thinking parts become thoughts and stored reasoning, text parts and string deltas the answer", async () => {
    mock.script(recordedReply(PROVIDER_STREAMS.mistralThinking));
    const { result, text, thoughts, events } = await run();
    assert.ok(result.ok);
    assert.equal(text, "2 + 2 = 4.");
    assert.equal(thoughts, "The user is asking for 2 + 2. Simple arithmetic.");
    assert.equal(result.message.content, "2 + 2 = 4.");
    assert.equal(result.message.reasoning_content, "The user is asking for 2 + 2. Simple arithmetic.");
    assert.equal(result.finishReason, "stop");
    assert.deepEqual(result.usage, { promptTokens: 12, completionTokens: 40, totalTokens: 52 });
    // The delta with both part types streams them in the order sent: the thought, then the text.
    const order = events.map((e) => (e.type === "text_delta" || e.type === "reasoning_delta" ? e.text : ""));
    assert.ok(order.indexOf(" Simple arithmetic.") < order.indexOf("2 + 2"));
  });

  test("Mistral, non-streaming: the parts of message.content are split the same way", async () => {
    mock.script(jsonCompletion(PROVIDER_COMPLETIONS.mistralThinking));
    const { result, text, thoughts } = await run();
    assert.ok(result.ok);
    assert.equal(result.message.content, "4");
    assert.equal(result.message.reasoning_content, "Add them.");
    assert.equal(text, "4");
    assert.equal(thoughts, "Add them.");
    assert.deepEqual(result.usage, { promptTokens: 10, completionTokens: 6, totalTokens: 16 });
  });

  test("non-streaming: content null next to `reasoning` and a tool call", async () => {
    mock.script(jsonCompletion(PROVIDER_COMPLETIONS.reasoningWithToolCall));
    const { result } = await run();
    assert.ok(result.ok);
    assert.equal(result.message.content, null);
    assert.equal(result.message.reasoning_content, "Look first.");
    assert.deepEqual(
      result.toolCalls.map((c) => [c.id, c.name, c.args]),
      [["call_x", "read", { file_path: "a" }]],
    );
    assert.equal(result.finishReason, "tool_calls");
  });

  test("Gemini: unindexed whole tool calls in the chunk that finishes, with usage", async () => {
    mock.script(recordedReply(PROVIDER_STREAMS.geminiToolCalls));
    const { result } = await run();
    assert.ok(result.ok);
    assert.equal(result.finishReason, "tool_calls");
    assert.deepEqual(
      result.toolCalls.map((c) => [c.id, c.name, c.args, c.status.kind]),
      [
        ["function-call-1", "read", { file_path: "a.txt" }, "ok"],
        ["function-call-2", "read", { file_path: "b.txt" }, "ok"],
      ],
    );
    assert.deepEqual(result.usage, { promptTokens: 40, completionTokens: 16, totalTokens: 56 });
  });

  test("unindexed calls one per chunk with empty ids stay separate calls, each with its own generated id", async () => {
    mock.script(recordedReply(PROVIDER_STREAMS.unindexedCallsPerChunk));
    const { result } = await run();
    assert.ok(result.ok);
    assert.deepEqual(
      result.toolCalls.map((c) => [c.name, c.args]),
      [
        ["read", { file_path: "a.txt" }],
        ["terminal", { command: "ls" }],
      ],
    );
    const [first, second] = result.toolCalls;
    assert.match(first?.id ?? "", /^call_/);
    assert.notEqual(first?.id, second?.id);
  });

  test("calls that all come numbered index 0 are told apart by their ids", async () => {
    mock.script(recordedReply(PROVIDER_STREAMS.reusedIndex));
    const { result } = await run();
    assert.ok(result.ok);
    assert.deepEqual(
      result.toolCalls.map((c) => [c.id, c.name, c.args]),
      [
        ["call_a", "read", { file_path: "a.txt" }],
        ["call_b", "read", { file_path: "b.txt" }],
      ],
    );
  });

  test('later fragments with "id": "" and an empty name continue the call, keeping its id and name', async () => {
    mock.script(recordedReply(PROVIDER_STREAMS.emptyIdContinuations));
    const { result, events } = await run();
    assert.ok(result.ok);
    assert.deepEqual(
      result.toolCalls.map((c) => [c.id, c.name, c.args, c.status.kind]),
      [["call_qwen_1", "read", { file_path: "src/main.ts", offset: 10 }, "ok"]],
    );
    assert.equal(result.message.content, null);
    // Consumers of the deltas see one call: an empty id is never announced as an id.
    const deltas = events.filter((e) => e.type === "tool_call_delta");
    assert.ok(deltas.every((e) => e.type === "tool_call_delta" && e.index === 0 && e.id !== ""));
    assert.deepEqual(result.usage, { promptTokens: 30, completionTokens: 20, totalTokens: 50 });
  });

  test("DeepSeek: reasoning_content next to content null, usage only in the last chunk", async () => {
    mock.script(recordedReply(PROVIDER_STREAMS.deepseekReasoningContent));
    const { result, text, thoughts } = await run();
    assert.ok(result.ok);
    assert.equal(thoughts, "Check the file first.");
    assert.equal(text, "Done.");
    assert.equal(result.message.reasoning_content, "Check the file first.");
    assert.equal(result.message.content, "Done.");
    assert.deepEqual(result.usage, {
      promptTokens: 20,
      completionTokens: 30,
      totalTokens: 50,
      cachedTokens: 8,
      reasoningTokens: 24,
    });
  });

  test("OpenRouter: `reasoning` is read once, not again from reasoning_details", async () => {
    mock.script(recordedReply(PROVIDER_STREAMS.openrouterReasoning));
    const { result, thoughts } = await run();
    assert.ok(result.ok);
    assert.equal(thoughts, "Plan: answer briefly.");
    assert.equal(result.message.reasoning_content, "Plan: answer briefly.");
    assert.equal(result.message.content, "Hi!");
  });

  test("the same reasoning sent in both field names appears once; an empty one defers to the other", async () => {
    mock.script(recordedReply(PROVIDER_STREAMS.bothReasoningFields));
    const { result, thoughts } = await run();
    assert.ok(result.ok);
    assert.equal(thoughts, "Think once.");
    assert.equal(result.message.reasoning_content, "Think once.");
    assert.equal(result.message.content, "Once.");
  });

  test("Azure: a first chunk with no choices and only filter results is skipped, the answer is whole", async () => {
    mock.script(recordedReply(PROVIDER_STREAMS.azureFilterFirst));
    const { result, text } = await run();
    assert.ok(result.ok);
    assert.equal(text, "Filtered fine.");
    assert.equal(result.message.content, "Filtered fine.");
    assert.equal(result.finishReason, "stop");
    assert.deepEqual(result.usage, { promptTokens: 9, completionTokens: 3, totalTokens: 12 });
  });
});
