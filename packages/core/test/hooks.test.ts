import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { ChatMessage, HookError, LlmClient } from "@crow/core";
import { HookBus } from "@crow/core/internal";
import { type MockLlm, reply, startMockLlm } from "@crow/testkit";
import { fakeTools, runTurn, testClient } from "./helpers.js";

const ask = (text: string): ChatMessage[] => [{ role: "user", content: text }];
const ctx = () => ({ signal: new AbortController().signal });

describe("hook bus semantics", () => {
  test("observe: every handler runs in order; a throwing one is reported and the rest still run", async () => {
    const errors: HookError[] = [];
    const bus = new HookBus({ onError: (e) => errors.push(e) });
    const seen: string[] = [];
    bus.on("session_start", (e) => {
      seen.push(`a:${e.sessionId}`);
    });
    bus.on(
      "session_start",
      () => {
        throw new Error("extension bug");
      },
      { name: "buggy" },
    );
    bus.on("session_start", async (e) => {
      seen.push(`c:${e.sessionId}`);
    });
    await bus.emit("session_start", { sessionId: "s1", cwd: "/tmp" }, ctx());
    assert.deepEqual(seen, ["a:s1", "c:s1"]);
    assert.deepEqual(
      errors.map((e) => [e.point, e.handler, e.message]),
      [["session_start", "buggy", "extension bug"]],
    );
  });

  test("gate: the first block wins; rewrites chain to later handlers", async () => {
    const bus = new HookBus();
    const later: unknown[] = [];
    bus.on("before_tool_call", ({ call }) => ({ args: { ...call.args, added: 1 } }));
    bus.on("before_tool_call", ({ call }) => {
      later.push(call.args);
      return undefined;
    });
    bus.on("before_tool_call", () => ({ block: true, reason: "first" }));
    bus.on("before_tool_call", () => {
      later.push("must not run");
      return { block: true, reason: "second" };
    });
    const definition = { type: "function" as const, function: { name: "write" } };
    const decision = await bus.gateToolCall(
      { call: { id: "1", name: "write", tool: "write", args: { x: 1 } }, kind: "edit", definition },
      ctx(),
    );
    assert.deepEqual(decision, { block: true, reason: "first" });
    assert.deepEqual(later, [{ x: 1, added: 1 }]);
  });

  test("unsubscribing removes the handler", async () => {
    const bus = new HookBus();
    let calls = 0;
    const off = bus.on("session_end", () => {
      calls++;
    });
    await bus.emit("session_end", { sessionId: "s" }, ctx());
    off();
    await bus.emit("session_end", { sessionId: "s" }, ctx());
    assert.equal(calls, 1);
    assert.equal(bus.count("session_end"), 0);
  });
});

describe("hooks in the loop", () => {
  let mock: MockLlm;
  let llm: LlmClient;
  before(async () => {
    mock = await startMockLlm();
    llm = testClient(mock.url);
  });
  after(() => mock.close());

  test("before_request transforms chain, apply to the request only, and a failing one is skipped", async () => {
    const bus = new HookBus();
    bus.on("before_request", (draft) => ({
      ...draft,
      messages: [...draft.messages, { role: "user", content: "[skill: be brief]" }],
    }));
    bus.on("before_request", () => {
      throw new Error("broken transform");
    });
    bus.on("before_request", (draft) => ({ ...draft, params: { ...draft.params, temperature: 0.2 } }));
    mock.script(
      reply()
        .text("ok")
        .expect((req) => {
          assert.equal(req.body.messages.at(-1)?.content, "[skill: be brief]");
          assert.equal(req.body.temperature, 0.2);
        }),
    );
    const { stop, events } = await runTurn(ask("hi"), {
      llm,
      model: "m",
      tools: fakeTools({}),
      hooks: bus.loopHooks(),
    });
    assert.equal(stop.reason, "end_turn");
    assert.deepEqual(
      stop.messages.map(({ role, content }) => ({ role, content })),
      [{ role: "assistant", content: "ok" }],
    );
    const hookErrors = events.filter((e) => e.type === "hook_error");
    assert.equal(hookErrors.length, 1);
    assert.equal(hookErrors[0]?.type === "hook_error" && hookErrors[0].error.message, "broken transform");
    mock.assertDone();
  });

  test("before_tool_call rewrites args, after_tool_call rewrites the result, observers see the turn", async () => {
    const bus = new HookBus();
    const observed: string[] = [];
    bus.on("before_tool_call", ({ call }) => ({ args: { ...call.args, file_path: "/safe/path" } }));
    bus.on("after_tool_call", ({ result }) => ({ ...result, content: `${String(result.content)} [checked]` }));
    bus.on("after_response", (e) => {
      observed.push(`response:${e.finishReason}:${e.usage?.totalTokens ?? "-"}`);
    });
    bus.on("turn_end", (e) => {
      observed.push(`end:${e.stopReason}:${e.messages.length}`);
    });
    const tools = fakeTools({ read: (args) => `read ${String(args.file_path)}` });
    mock.script(
      reply().toolCall("read", { file_path: "/etc/passwd" }).usage(5, 5),
      reply()
        .text("done")
        .expect((req) => assert.equal(req.body.messages.at(-1)?.content, "read /safe/path [checked]")),
    );
    const { events } = await runTurn(ask("hi"), { llm, model: "m", tools, hooks: bus.loopHooks() });
    assert.deepEqual(tools.calls, [{ name: "read", args: { file_path: "/safe/path" } }]);
    const running = events.find((e) => e.type === "tool_call_running");
    assert.deepEqual(running?.type === "tool_call_running" && running.args, { file_path: "/safe/path" });
    assert.deepEqual(observed, ["response:tool_calls:10", "response:stop:-", "end:end_turn:3"]);
    mock.assertDone();
  });

  test("a blocking gate answers the call with the reason and the loop continues", async () => {
    const bus = new HookBus();
    bus.on("before_tool_call", ({ call }) =>
      call.tool === "terminal" ? { block: true, reason: "no shell today" } : undefined,
    );
    const tools = fakeTools({ terminal: () => "ran", read: () => "file" });
    mock.script(
      reply().toolCall("terminal", { command: "rm -rf /" }, { id: "t" }).toolCall("read", {}, { id: "r" }),
      reply().text("fine"),
    );
    const { stop, events } = await runTurn(ask("hi"), { llm, model: "m", tools, hooks: bus.loopHooks() });
    assert.equal(stop.reason, "end_turn");
    assert.deepEqual(
      stop.messages.filter((m) => m.role === "tool").map((m) => m.content),
      ["no shell today", "file"],
    );
    assert.ok(events.some((e) => e.type === "tool_call_done" && e.id === "t" && e.status === "blocked"));
    assert.deepEqual(
      tools.calls.map((c) => c.name),
      ["read"],
    );
    mock.assertDone();
  });
});
