import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, test } from "node:test";
import { type ChatMessage, type CompactionEvent, type LlmClient, type LlmRequest, openStore } from "@crow/core";
import {
  Compaction,
  CompactionError,
  compactedHistory,
  compactionThreshold,
  HookBus,
  planCompaction,
  renderTranscript,
  summarizerMessages,
  watchPromptSize,
} from "@crow/core/internal";
import { checkToolInvariant, type MockMessage } from "@crow/testkit";

const user = (content: string): ChatMessage => ({ role: "user", content });
const text = (content: string): ChatMessage => ({ role: "assistant", content });
const call = (id: string, name: string, args: Record<string, unknown>): ChatMessage => ({
  role: "assistant",
  content: null,
  tool_calls: [{ id, type: "function", function: { name, arguments: JSON.stringify(args) } }],
});
const result = (id: string, content: string): ChatMessage => ({ role: "tool", tool_call_id: id, content });

/** A conversation of three turns with tool calls in each. */
function conversation(): ChatMessage[] {
  return [
    user("Fix the failing test in src/math.ts"),
    call("c1", "read", { file_path: "/w/src/math.ts" }),
    result("c1", "export const add = (a, b) => a - b;"),
    text("The add function subtracts. Fixing."),
    user("Also run the tests"),
    call("c2", "terminal", { command: "npm test" }),
    result("c2", "1 failing: add(1, 2) expected 3 got -1"),
    call("c3", "edit", { file_path: "/w/src/math.ts", old_string: "a - b", new_string: "a + b" }),
    result("c3", "Edited /w/src/math.ts"),
    text("Fixed and tested."),
    user("Now add a multiply function"),
    call("c4", "write", { file_path: "/w/src/mul.ts", content: "export const mul = (a, b) => a * b;" }),
    result("c4", "Wrote /w/src/mul.ts"),
  ];
}

/** An in-process LLM answering every request with `answer`, recording the requests. */
function fakeLlm(answer: string | (() => string)): LlmClient & { requests: LlmRequest[] } {
  const requests: LlmRequest[] = [];
  return {
    requests,
    async stream(request) {
      requests.push(request);
      const content = typeof answer === "string" ? answer : answer();
      return {
        ok: true,
        message: { role: "assistant", content },
        toolCalls: [],
        finishReason: "stop",
        usage: { promptTokens: 500, completionTokens: 50, totalTokens: 550 },
        attempts: 1,
      };
    },
  };
}

describe("compaction planning", () => {
  test("keeps [system, first user, summary, last user onwards]", () => {
    const history = conversation();
    const system: ChatMessage = { role: "system", content: "You are Crow." };
    const plan = planCompaction([system, ...history]);
    assert.ok(!("reason" in plan));
    assert.deepEqual(plan.system, [system]);
    assert.deepEqual(plan.first, history[0]);
    assert.deepEqual(plan.middle, history.slice(1, 10));
    assert.deepEqual(plan.tail, history.slice(10));
    const compacted = compactedHistory(plan, "SUMMARY");
    assert.deepEqual(compacted, [system, history[0], { role: "assistant", content: "SUMMARY" }, ...history.slice(10)]);
  });

  test("the compacted history keeps every tool call with its result", () => {
    const history = conversation();
    // Cut anywhere a user message could be: every prefix that ends a turn.
    for (let end = 2; end <= history.length; end++) {
      const prefix = history.slice(0, end);
      if (checkToolInvariant(prefix as MockMessage[]).length > 0) continue; // a turn cut mid-call is not a history
      const plan = planCompaction(prefix);
      if ("reason" in plan) continue;
      const compacted = compactedHistory(plan, "summary");
      assert.deepEqual(checkToolInvariant(compacted as MockMessage[]), [], `prefix of ${end}`);
    }
  });

  test("nothing to compact: empty, a single user message, or nothing between first and last", () => {
    assert.deepEqual(planCompaction([]), { reason: "no_user_message" });
    assert.deepEqual(planCompaction([user("a"), call("x", "read", {}), result("x", "r")]), { reason: "single_turn" });
    assert.deepEqual(planCompaction([user("a"), user("b")]), { reason: "nothing_between" });
  });

  test("threshold: configured value, else a fraction of a known context window, else 120 000", () => {
    assert.equal(compactionThreshold(50_000, 200_000), 50_000);
    assert.equal(compactionThreshold(undefined, 200_000), 160_000);
    assert.equal(compactionThreshold(undefined), 120_000);
  });
});

describe("summarizer request", () => {
  test("tool calls and results are text; no tool_calls and no tool messages are sent", () => {
    const plan = planCompaction(conversation());
    assert.ok(!("reason" in plan));
    const messages = summarizerMessages(plan);
    assert.deepEqual(
      messages.map((m) => m.role),
      ["system", "user"],
    );
    assert.ok(messages.every((m) => m.role !== "tool" && !(m.role === "assistant" && m.tool_calls)));
    const prompt = String(messages[1]?.content);
    assert.match(prompt, /FIRST USER MESSAGE[^\n]*\nFix the failing test/);
    assert.match(prompt, /→ called terminal\(\{"command":"npm test"\}\)/);
    assert.match(prompt, /\[terminal result\]\n1 failing: add\(1, 2\) expected 3 got -1/);
    assert.match(prompt, /LATEST USER MESSAGE[^\n]*\nNow add a multiply function/);
    assert.doesNotMatch(prompt, /mul\.ts/, "the tail is kept verbatim, not summarized");
  });

  test("long tool results are clipped and an oversized transcript drops middle messages with a note", () => {
    const big = "x".repeat(10_000);
    const clipped = renderTranscript([call("a", "read", {}), result("a", big)], { maxToolResultChars: 1000 });
    assert.match(clipped, /9000 characters omitted/);
    const many: ChatMessage[] = [];
    for (let i = 0; i < 100; i++) many.push(text(`message number ${i} ${"y".repeat(200)}`));
    const fitted = renderTranscript(many, { maxChars: 5_000 });
    assert.ok(fitted.length <= 5_200, `${fitted.length}`);
    assert.match(fitted, /message number 0 /);
    assert.match(fitted, /message number 99 /);
    assert.match(fitted, /message\(s\) omitted/);
  });
});

describe("the compaction extension", () => {
  test("due() follows the last response's prompt tokens seen on the hook bus", async () => {
    const bus = new HookBus();
    const compaction = new Compaction({ sessionId: "s", threshold: () => 1000 });
    // The built-in compaction extension's watcher, registered on a bare hook bus.
    watchPromptSize(
      (point, handler) => bus.on(point, handler),
      () => compaction,
    );
    const ctx = { signal: new AbortController().signal, reportError: () => {} };
    const hooks = bus.loopHooks();
    const response = (promptTokens: number) =>
      hooks.afterResponse(
        {
          message: { role: "assistant", content: "x" },
          usage: { promptTokens, completionTokens: 1, totalTokens: promptTokens + 1 },
          finishReason: "stop",
          step: 1,
        },
        ctx,
      );
    await response(900);
    assert.equal(compaction.due(), false);
    await response(1500);
    assert.equal(compaction.due(), true);
    await response(800);
    assert.equal(compaction.due(), false, "the last request counts, not the largest");
  });

  test("compacts into the store: the summary is the model's text, the original history is archived", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "crow-compact-"));
    const store = await openStore(path.join(dir, "crow.db"));
    try {
      const session = await store.createSession({ cwd: "/w" });
      const history = conversation();
      await store.appendMessages(
        session.id,
        history.map((message) => ({ message })),
      );
      const llm = fakeLlm("## Summary\nYou fixed add() in /w/src/math.ts; tests pass.");
      let flushed = false;
      const compaction = new Compaction({
        sessionId: session.id,
        threshold: () => 10,
        store,
        beforeSwap: async () => {
          flushed = true;
        },
      });
      compaction.observe(99);
      const events: CompactionEvent[] = [];
      const outcome = await compaction.compact({
        history,
        llm,
        model: "m",
        reason: "threshold",
        onEvent: (e) => events.push(e),
      });
      assert.ok(outcome.compacted);
      assert.equal(flushed, true, "pending writes are waited for before the swap");
      assert.equal(compaction.due(), false, "a compaction resets the prompt size");
      assert.equal(outcome.summary, "## Summary\nYou fixed add() in /w/src/math.ts; tests pass.");
      assert.notEqual(outcome.summary, "content");
      assert.deepEqual(
        events.map((e) => e.type),
        ["compaction_started", "compaction_done"],
      );

      const stored = (await store.loadMessages(session.id)).map((m) => m.message);
      assert.deepEqual(stored, outcome.history);
      assert.deepEqual(stored[1], { role: "assistant", content: outcome.summary });
      assert.equal((await store.getSession(session.id))?.archivedFrom, null, "the session keeps its id");
      const archives = await store.listArchives(session.id);
      assert.equal(archives.length, 1);
      assert.equal(archives[0]?.id, outcome.archiveId);
      const archived = (await store.loadMessages(outcome.archiveId ?? "")).map((m) => m.message);
      assert.deepEqual(archived, history);
    } finally {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  test("a failed or empty summary leaves everything as it was", async () => {
    let swapped = false;
    const store = {
      replaceMessages: async () => {
        swapped = true;
        return "archive";
      },
    };
    const compaction = new Compaction({ sessionId: "s", threshold: () => 10, store });
    const events: CompactionEvent[] = [];
    await assert.rejects(
      compaction.compact({
        history: conversation(),
        llm: fakeLlm("   "),
        model: "m",
        reason: "manual",
        onEvent: (e) => events.push(e),
      }),
      (error: unknown) => error instanceof CompactionError && /empty summary/.test(error.message),
    );
    const failing: LlmClient = {
      stream: async () => ({
        ok: false,
        error: { kind: "http", message: "overloaded", retryable: true, attempts: 3 },
        partial: { content: "", reasoning: "" },
      }),
    };
    await assert.rejects(
      compaction.compact({ history: conversation(), llm: failing, model: "m", reason: "manual" }),
      /summary request failed: overloaded/,
    );
    assert.equal(swapped, false);
    assert.deepEqual(
      events.map((e) => e.type),
      ["compaction_started", "compaction_failed"],
    );
  });

  test("nothing to compact is an answer, not an error, and sends no request", async () => {
    const llm = fakeLlm("never");
    const compaction = new Compaction({ sessionId: "s", threshold: () => 10 });
    const outcome = await compaction.compact({ history: [user("hi")], llm, model: "m", reason: "manual" });
    assert.equal(outcome.compacted, false);
    assert.equal(llm.requests.length, 0);
  });
});
