import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { type CrowEvent, createLlmClient, createRuntime, type PlanEntry, type RuntimeOptions } from "@crow/core";
import { type MockLlm, reply, startMockLlm, textReply } from "@crow/testkit";
import { keepPlan, planFromHistory, planText } from "../src/extensions/todo.js";
import type { AssistantMessage, ChatMessage } from "../src/messages.js";

const quiet = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

const PLAN: PlanEntry[] = [
  { content: "Reproduce the bug", status: "completed", priority: "high" },
  { content: "Fix it", status: "in_progress", priority: "medium" },
];

describe("the SDK: the todo tool's plan", () => {
  let mock: MockLlm;
  let dir: string;
  let options: RuntimeOptions;

  before(async () => {
    mock = await startMockLlm();
    dir = await mkdtemp(path.join(tmpdir(), "crow-todo-"));
    options = {
      llm: createLlmClient({ baseURL: mock.url, retry: { maxRetries: 0 } }),
      model: "mock-model",
      store: path.join(dir, "crow.db"),
      home: dir,
      systemPrompt: "You are a test agent.",
      logger: quiet,
    };
  });
  after(async () => {
    await mock.close();
    await rm(dir, { recursive: true, force: true });
  });

  test("a todo call is a plan event in the prompt's events and for subscribers; a reopened session has it", async () => {
    const crow = await createRuntime(options);
    let id: string;
    try {
      const session = await crow.newSession({ cwd: dir });
      id = session.id;
      const subscribed: CrowEvent[] = [];
      session.subscribe((event) => subscribed.push(event));
      mock.script(reply().toolCall("todo", { todos: PLAN }), textReply("On it."));
      const run = session.prompt("fix the bug");
      const plans: PlanEntry[][] = [];
      for await (const event of run) if (event.type === "plan") plans.push(event.entries);
      assert.equal((await run.result).stopReason, "end_turn");
      assert.deepEqual(plans, [PLAN]);
      assert.deepEqual(
        subscribed.filter((e) => e.type === "plan"),
        [{ type: "plan", entries: PLAN }],
      );
      assert.deepEqual(session.plan, PLAN);
      mock.assertDone();
    } finally {
      await crow.close();
    }

    const again = await createRuntime(options);
    try {
      const session = await again.loadSession(id);
      assert.deepEqual(session.plan, PLAN, "the plan is restored from the stored history");
      await session.command("clear");
      assert.deepEqual(session.plan, [], "/clear drops the plan with the conversation");
    } finally {
      await again.close();
    }
  });

  test("disableBuiltins: ['todo'] removes the tool", async () => {
    const crow = await createRuntime({ ...options, disableBuiltins: ["todo"] });
    try {
      const session = await crow.newSession({ cwd: dir });
      mock.script(
        textReply("ok").expect((req) =>
          assert.ok(!req.body.tools?.some((t) => t.function.name === "todo"), "no todo tool"),
        ),
      );
      await session.prompt("hi").result;
      mock.assertDone();
    } finally {
      await crow.close();
    }
  });

  test("after a compaction the plan is re-stated on the summary only when the history lost it", () => {
    const summary: AssistantMessage = { role: "assistant", content: "SUMMARY" };
    const compacted: ChatMessage[] = [
      { role: "user", content: "fix the bug" },
      summary,
      { role: "user", content: "go on" },
    ];
    const kept = keepPlan(compacted, summary, PLAN);
    assert.ok(kept);
    assert.equal(kept.length, 4);
    assert.deepEqual(planFromHistory(kept), PLAN, "a load finds the plan again");
    const [, restated, result, last] = kept;
    assert.ok(restated?.role === "assistant" && restated.content === "SUMMARY");
    assert.equal(result?.role === "tool" && result.tool_call_id, restated.tool_calls?.[0]?.id);
    assert.equal(result?.role === "tool" && result.content, planText(PLAN));
    assert.deepEqual(last, { role: "user", content: "go on" });

    // The last todo call is still in the kept part (after the last user message): nothing to add.
    const call = {
      id: "c1",
      type: "function" as const,
      function: { name: "todo", arguments: JSON.stringify({ todos: PLAN }) },
    };
    const withCall: ChatMessage[] = [
      ...compacted,
      { role: "assistant", content: null, tool_calls: [call] },
      { role: "tool", tool_call_id: "c1", content: planText(PLAN) },
    ];
    assert.equal(keepPlan(withCall, summary, PLAN), undefined);
    assert.equal(keepPlan(compacted, summary, []), undefined, "no plan, nothing to keep");
  });
});
