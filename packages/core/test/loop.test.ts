import assert from "node:assert/strict";
import { after, before, beforeEach, describe, test } from "node:test";
import type { ChatMessage, LlmClient, LoopEvent, ToolMessage } from "@crow/core";
import { httpError, type MockLlm, reply, startMockLlm } from "@crow/testkit";
import { delay, fakeTools, runTurn, testClient, untilAborted } from "./helpers.js";

const ask = (text: string): ChatMessage[] => [
  { role: "system", content: "You are a test." },
  { role: "user", content: text },
];

const toolMessages = (messages: ChatMessage[]) => messages.filter((m): m is ToolMessage => m.role === "tool");

describe("the loop", () => {
  let mock: MockLlm;
  let llm: LlmClient;
  before(async () => {
    mock = await startMockLlm();
    llm = testClient(mock.url);
  });
  after(() => mock.close());
  beforeEach(() => {
    // Each test scripts its own turns; leftovers from a failed test must not leak into the next.
    mock.assertDone();
  });

  test("a text answer ends the turn with end_turn and appends the assistant message", async () => {
    mock.script(reply().reasoning("hmm").text("Hello!").usage(20, 3));
    const { events, stop } = await runTurn(ask("hi"), { llm, model: "m", tools: fakeTools({}) });
    assert.equal(stop.reason, "end_turn");
    // The message carries the id its request announced (never sent to the model: see the llm body tests).
    const start = events.find((e) => e.type === "request_start");
    const id = start?.type === "request_start" ? start.messageId : "";
    assert.match(id, /^[0-9a-f-]{36}$/);
    assert.deepEqual(stop.messages, [{ role: "assistant", id, content: "Hello!", reasoning_content: "hmm" }]);
    assert.deepEqual(stop.usage, { promptTokens: 20, completionTokens: 3, totalTokens: 23 });
    const types = events.map((e) => e.type);
    assert.deepEqual(types, [
      "request_start",
      "reasoning_delta",
      "text_delta",
      "assistant_message",
      "message_appended",
      "stop",
    ]);
    mock.assertDone();
  });

  test("steering: a steer joins after the tool results; one arriving at the end gets one more request", async () => {
    const queue: ChatMessage[] = [];
    let closed: string | undefined;
    const inbox = {
      waiting: () => queue.length > 0,
      take: () => queue.splice(0) as Extract<ChatMessage, { role: "user" }>[],
      close: (reason: string) => {
        closed = reason;
      },
    };
    const tools = fakeTools({
      job: async () => {
        queue.push({ role: "user", content: "during the tool" });
        return "done";
      },
    });
    mock.script(
      reply().toolCall("job", {}, { id: "s1" }),
      reply()
        .text("final answer")
        .expect((req) => {
          const last = req.body.messages.slice(-2).map((m) => [m.role, m.content]);
          assert.deepEqual(last, [
            ["tool", "done"],
            ["user", "during the tool"],
          ]);
        }),
      reply()
        .text("read it")
        .expect((req) => assert.equal(req.body.messages.at(-1)?.content, "while answering")),
    );
    const { events, stop } = await runTurn(ask("go"), {
      llm,
      model: "m",
      tools,
      steering: inbox,
      onAppend: (message) => {
        // The model's final answer of request 2 is being appended: a steer arrives now, before the loop decides.
        if (message.role === "assistant" && message.content === "final answer") {
          queue.push({ role: "user", content: "while answering" });
        }
      },
    });
    assert.equal(stop.reason, "end_turn");
    assert.equal(closed, "end_turn", "the inbox closes when the loop stops");
    const steers = events.filter((e) => e.type === "message_appended" && e.message.role === "user");
    assert.equal(steers.length, 2, "each steer is announced once, when it joins");
    mock.assertDone();
  });

  test("write-ahead: an assistant message's tool calls run only after onAppend has settled for it", async () => {
    const log: string[] = [];
    const tools = fakeTools({
      job: async () => {
        log.push("tool ran");
        return "done";
      },
    });
    mock.script(reply().toolCall("job", {}, { id: "w1" }), reply().text("ok"));
    const { stop } = await runTurn(ask("go"), {
      llm,
      model: "m",
      tools,
      onAppend: async (message) => {
        log.push(`append ${message.role}`);
        if (message.role === "assistant" && message.tool_calls) {
          await delay(50); // a slow store
          log.push("assistant stored");
        }
      },
    });
    assert.equal(stop.reason, "end_turn");
    assert.deepEqual(log, ["append assistant", "assistant stored", "tool ran", "append tool", "append assistant"]);
    mock.assertDone();
  });

  test("parallel tool calls run concurrently; results are appended in call order", async () => {
    const started: string[] = [];
    const tools = fakeTools({
      slow: async () => {
        started.push("slow");
        await delay(80);
        return "slow result";
      },
      fast: async () => {
        started.push("fast");
        return "fast result";
      },
    });
    mock.script(
      reply().toolCall("slow", {}, { id: "a" }).toolCall("fast", {}, { id: "b" }),
      reply()
        .text("both done")
        .expect((req) => {
          const last = req.body.messages.slice(-2);
          assert.deepEqual(
            last.map((m) => [m.tool_call_id, m.content]),
            [
              ["a", "slow result"],
              ["b", "fast result"],
            ],
          );
        }),
    );
    const { events, stop } = await runTurn(ask("go"), { llm, model: "m", tools });
    assert.equal(stop.reason, "end_turn");
    // Both started before either finished, and the fast one finished first.
    assert.deepEqual(started, ["slow", "fast"]);
    const done = events.filter((e) => e.type === "tool_call_done").map((e) => e.type === "tool_call_done" && e.id);
    assert.deepEqual(done, ["b", "a"]);
    const appended = events
      .filter((e): e is Extract<LoopEvent, { type: "message_appended" }> => e.type === "message_appended")
      .map((e) => e.message.role === "tool" && e.message.tool_call_id);
    assert.deepEqual(appended, [false, "a", "b", false]);
    mock.assertDone();
  });

  test("tool progress is relayed while the tool runs", async () => {
    const tools = fakeTools({
      terminal: (_args, ctx) => {
        ctx.onProgress({ message: "line 1" });
        return "exit 0";
      },
    });
    mock.script(reply().toolCall("crow-mcp_terminal", { command: "ls" }), reply().text("ok"));
    const { events } = await runTurn(ask("go"), { llm, model: "m", tools });
    const pending = events.find((e) => e.type === "tool_call_pending");
    assert.equal(pending?.type === "tool_call_pending" && pending.call.kind, "execute");
    assert.ok(events.some((e) => e.type === "tool_call_progress" && e.progress.message === "line 1"));
    mock.assertDone();
  });

  test("cancel while streaming keeps the partial text and the next turn's history is valid", async () => {
    mock.script(reply().text("I will now ").hang());
    const controller = new AbortController();
    const first = await runTurn(
      ask("go"),
      { llm, model: "m", tools: fakeTools({}), signal: controller.signal },
      (e) => {
        if (e.type === "text_delta") controller.abort();
      },
    );
    assert.equal(first.stop.reason, "cancelled");
    const start = first.events.find((e) => e.type === "request_start");
    const id = start?.type === "request_start" ? start.messageId : "";
    assert.deepEqual(first.stop.messages, [{ role: "assistant", id, content: "I will now " }]);
    mock.script(reply().text("again"));
    const second = await runTurn([...first.history, { role: "user", content: "continue" }], {
      llm,
      model: "m",
      tools: fakeTools({}),
    });
    assert.equal(second.stop.reason, "end_turn");
    mock.assertDone();
  });

  test("cancel during a tool call gives every call exactly one result and returns cancelled", async () => {
    const controller = new AbortController();
    const tools = fakeTools({
      quick: () => "quick done",
      stuck: async (_args, ctx) => {
        setTimeout(() => controller.abort(), 20);
        await untilAborted(ctx.signal);
        return "too late";
      },
    });
    mock.script(reply().text("Working.").toolCall("quick", {}, { id: "q" }).toolCall("stuck", {}, { id: "s" }));
    const first = await runTurn(ask("go"), { llm, model: "m", tools, signal: controller.signal });
    assert.equal(first.stop.reason, "cancelled");
    const results = toolMessages(first.stop.messages);
    assert.deepEqual(
      results.map((m) => m.tool_call_id),
      ["q", "s"],
    );
    assert.equal(results[0]?.content, "quick done");
    assert.match(String(results[1]?.content), /cancelled/);
    const done = first.events.filter((e) => e.type === "tool_call_done");
    assert.deepEqual(
      done.map((e) => e.type === "tool_call_done" && [e.id, e.status]),
      [
        ["q", "completed"],
        ["s", "cancelled"],
      ],
    );
    mock.script(reply().text("resumed"));
    const second = await runTurn([...first.history, { role: "user", content: "again" }], {
      llm,
      model: "m",
      tools,
    });
    assert.equal(second.stop.reason, "end_turn");
    mock.assertDone();
  });

  test("a signal aborted before the turn starts returns cancelled without a request", async () => {
    const controller = new AbortController();
    controller.abort();
    const { stop } = await runTurn(ask("go"), { llm, model: "m", tools: fakeTools({}), signal: controller.signal });
    assert.equal(stop.reason, "cancelled");
    assert.deepEqual(stop.messages, []);
  });

  test("breaking out of the event iteration cancels the turn", async () => {
    mock.script(reply().text("streaming…").hang());
    const { runLoop } = await import("@crow/core/internal");
    const before = mock.requests.length;
    for await (const event of runLoop({ messages: ask("go") }, { llm, model: "m", tools: fakeTools({}) })) {
      if (event.type === "text_delta") break;
    }
    assert.equal(mock.requests.length, before + 1);
    // The hung response is cut when the loop aborts; nothing is left scripted.
    mock.assertDone();
  });

  test("max steps stops with max_turn_requests and a complete history", async () => {
    const tools = fakeTools({ read: () => "content" });
    mock.script(reply().toolCall("read", { file_path: "a" }), reply().toolCall("read", { file_path: "b" }));
    const { stop, history } = await runTurn(ask("loop"), { llm, model: "m", tools, maxStepsPerTurn: 2 });
    assert.equal(stop.reason, "max_turn_requests");
    assert.equal(toolMessages(stop.messages).length, 2);
    mock.script(reply().text("ok"));
    await runTurn([...history, { role: "user", content: "go on" }], { llm, model: "m", tools });
    mock.assertDone();
  });

  test("an unknown tool gets an error result and the loop continues", async () => {
    const tools = fakeTools({ read: () => "content" });
    mock.script(
      reply().toolCall("teleport", { where: "mars" }, { id: "t" }),
      reply()
        .text("sorry")
        .expect((req) => {
          const result = req.body.messages.at(-1);
          assert.equal(result?.tool_call_id, "t");
          assert.match(String(result?.content), /no tool named "teleport".*Available tools: read/);
        }),
    );
    const { stop, events } = await runTurn(ask("go"), { llm, model: "m", tools });
    assert.equal(stop.reason, "end_turn");
    assert.ok(events.some((e) => e.type === "tool_call_done" && e.id === "t" && e.status === "failed"));
    assert.equal(tools.calls.length, 0);
    mock.assertDone();
  });

  test("tool names match tolerantly (server prefix)", async () => {
    const tools = fakeTools({ read: () => "content" });
    mock.script(reply().toolCall("crow-mcp_read", { file_path: "x" }), reply().text("ok"));
    const { stop } = await runTurn(ask("go"), { llm, model: "m", tools });
    assert.equal(stop.reason, "end_turn");
    assert.equal(toolMessages(stop.messages)[0]?.content, "content");
    mock.assertDone();
  });

  test("unrepairable arguments get an error result with the raw text; repairable ones run", async () => {
    const tools = fakeTools({ read: (args) => `read ${String(args.file_path)}` });
    mock.script(
      reply()
        .toolCall("read", "<<garbage>>", { id: "bad" })
        .toolCall("read", '{"file_path": "ok.txt",', { id: "fixed" }),
      reply()
        .text("retrying")
        .expect((req) => {
          const [bad, fixed] = req.body.messages.slice(-2);
          assert.match(String(bad?.content), /could not be parsed as a JSON object.*<<garbage>>/s);
          assert.equal(fixed?.content, "read ok.txt");
        }),
    );
    const { stop } = await runTurn(ask("go"), { llm, model: "m", tools });
    assert.equal(stop.reason, "end_turn");
    assert.deepEqual(tools.calls, [{ name: "read", args: { file_path: "ok.txt" } }]);
    mock.assertDone();
  });

  test("a tool that throws becomes an error result", async () => {
    const tools = fakeTools({
      boom: () => {
        throw new Error("kaput");
      },
    });
    mock.script(reply().toolCall("boom", {}), reply().text("noted"));
    const { stop } = await runTurn(ask("go"), { llm, model: "m", tools });
    assert.equal(toolMessages(stop.messages)[0]?.content, "Error: kaput");
    mock.assertDone();
  });

  test("context length exceeded stops with error and keeps its kind", async () => {
    mock.script(httpError(400, { message: "prompt is too long: 300000 tokens > 200000 maximum" }));
    const { stop } = await runTurn(ask("go"), { llm, model: "m", tools: fakeTools({}) });
    assert.equal(stop.reason, "error");
    assert.equal(stop.error?.kind, "context_length_exceeded");
    mock.assertDone();
  });

  test("a provider down after retries stops with error carrying the provider's message", async () => {
    mock.script(
      httpError(503, { message: "overloaded" }),
      httpError(503, { message: "overloaded" }),
      httpError(503, { message: "overloaded" }),
    );
    const { stop, events } = await runTurn(ask("go"), { llm, model: "m", tools: fakeTools({}) });
    assert.equal(stop.reason, "error");
    assert.equal(stop.error?.message, "overloaded");
    assert.equal(events.filter((e) => e.type === "retry").length, 2);
    assert.deepEqual(stop.messages, []);
    mock.assertDone();
  });

  test("a stream dropped midway is retried; the stored text is not duplicated", async () => {
    mock.script(reply().text("Hel").dropConnection(), reply().text("Hello"));
    const { stop, events } = await runTurn(ask("go"), { llm, model: "m", tools: fakeTools({}) });
    // A retry is the same message: one id, kept.
    const start = events.find((e) => e.type === "request_start");
    const id = start?.type === "request_start" ? start.messageId : "";
    assert.deepEqual(stop.messages, [{ role: "assistant", id, content: "Hello" }]);
    assert.ok(events.some((e) => e.type === "retry"));
    mock.assertDone();
  });

  test("finish_reason length gives max_tokens; truncated tool calls are answered, not run", async () => {
    const tools = fakeTools({ write: () => "written" });
    mock.script(reply().text("cut off").finish("length"));
    const a = await runTurn(ask("go"), { llm, model: "m", tools });
    assert.equal(a.stop.reason, "max_tokens");
    mock.script(reply().toolCall("write", '{"file_path": "a", "content": "lo', { id: "w" }).finish("length"));
    const b = await runTurn(ask("go"), { llm, model: "m", tools });
    assert.equal(b.stop.reason, "max_tokens");
    assert.equal(tools.calls.length, 0);
    assert.match(String(toolMessages(b.stop.messages)[0]?.content), /cut off/);
    mock.assertDone();
  });

  test("content_filter gives refusal", async () => {
    mock.script(reply().finish("content_filter"));
    const { stop } = await runTurn(ask("go"), { llm, model: "m", tools: fakeTools({}) });
    assert.equal(stop.reason, "refusal");
    mock.assertDone();
  });

  test("multi-step turn: tool results feed the next request, the model sees the whole history", async () => {
    const tools = fakeTools({ read: () => "42" });
    mock.script(
      reply().toolCall("read", { file_path: "answer.txt" }, { id: "r1" }).usage(10, 2),
      reply()
        .text("The answer is 42.")
        .usage(15, 5)
        .expect((req) => {
          assert.deepEqual(
            req.body.messages.map((m) => m.role),
            ["system", "user", "assistant", "tool"],
          );
          assert.equal(req.body.model, "m");
          assert.equal(req.body.tools?.[0]?.function.name, "read");
        }),
    );
    const { stop } = await runTurn(ask("what is it?"), { llm, model: "m", tools });
    assert.equal(stop.reason, "end_turn");
    assert.deepEqual(stop.usage, { promptTokens: 25, completionTokens: 7, totalTokens: 32 });
    assert.deepEqual(stop.lastUsage, { promptTokens: 15, completionTokens: 5, totalTokens: 20 });
    mock.assertDone();
  });
});
