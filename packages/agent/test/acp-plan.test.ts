import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { methods, type PlanEntry, type SessionUpdate } from "@agentclientprotocol/sdk";
import { reply, textReply, useAcpFixture } from "@crow/testkit";

const plans = (updates: readonly SessionUpdate[]): PlanEntry[][] =>
  updates.flatMap((u) => (u.sessionUpdate === "plan" ? [u.entries] : []));

const FIRST: PlanEntry[] = [
  { content: "Find the failing test", status: "in_progress", priority: "high" },
  { content: "Fix the parser", status: "pending", priority: "high" },
  { content: "Update the changelog", status: "pending", priority: "low" },
];
const SECOND: PlanEntry[] = [
  { content: "Find the failing test", status: "completed", priority: "high" },
  { content: "Fix the parser", status: "in_progress", priority: "high" },
  { content: "Update the changelog", status: "pending", priority: "medium" },
];

describe("crow acp: plans (the todo tool)", () => {
  const fx = useAcpFixture({ startAgent: false });
  const spawn = () => fx.spawn();

  test("each todo call sends the whole list as a plan update, and session/load gives the last one back", async () => {
    const agent = await spawn();
    let sessionId: string;
    try {
      const session = await agent.newSession(fx.ws.dir);
      sessionId = session.sessionId;
      fx.mock.script(
        reply()
          .toolCall("todo", { todos: FIRST })
          .expect((req) => {
            const tool = req.body.tools?.find((t) => t.function.name === "todo");
            assert.ok(tool, "the model is offered the todo tool");
            assert.match(
              String(req.body.messages[0]?.content),
              /three or more steps, keep a plan with `todo`/,
              "the system prompt says when",
            );
          }),
        reply()
          .toolCall("todo", { todos: SECOND })
          .expect((req) => assert.match(String(req.body.messages.at(-1)?.content), /Plan updated \(0\/3 completed\)/)),
        textReply("Working on the parser next."),
      );
      const turn = await agent.prompt(sessionId, "Fix the parser bug and note it in the changelog.");
      assert.equal(turn.stopReason, "end_turn");
      assert.deepEqual(plans(turn.updates), [FIRST, SECOND]);
      const call = turn.updates.find((u) => u.sessionUpdate === "tool_call");
      assert.equal(call?.sessionUpdate === "tool_call" && call.kind, "think");
      // The plan update arrives before the call that wrote it completes.
      const planAt = turn.updates.findIndex((u) => u.sessionUpdate === "plan");
      const doneAt = turn.updates.findIndex((u) => u.sessionUpdate === "tool_call_update" && u.status === "completed");
      assert.ok(planAt >= 0 && planAt < doneAt);
      fx.mock.assertDone();
    } finally {
      await agent.close();
    }

    // A new process: the list comes back from the store with the replay, before the load answers.
    const second = await spawn();
    try {
      const before = second.notifications.length;
      await second.agent.request(methods.agent.session.load, { sessionId, cwd: fx.ws.dir, mcpServers: [] });
      const replayed = second.notifications.slice(before).map((n) => n.update);
      assert.deepEqual(plans(replayed), [SECOND]);
      // The restored plan is the session's: the model's next call replaces it.
      const third: PlanEntry[] = SECOND.map((e) => ({ ...e, status: "completed" }));
      fx.mock.script(reply().toolCall("todo", { todos: third }), textReply("All done."));
      const turn = await second.prompt(sessionId, "Finish it.");
      assert.deepEqual(plans(turn.updates), [third]);
      fx.mock.assertDone();
    } finally {
      await second.close();
    }
  });

  test("a compaction that summarizes the todo call keeps the plan: the model still sees it, a load gives it back", async () => {
    const agent = await spawn();
    let sessionId: string;
    try {
      sessionId = (await agent.newSession(fx.ws.dir)).sessionId;
      fx.mock.script(reply().toolCall("todo", { todos: FIRST }), textReply("Started."), textReply("Going on."));
      await agent.prompt(sessionId, "Fix the parser bug and note it in the changelog.");
      await agent.prompt(sessionId, "Go on.");
      // The todo call sits between the first and the last user message: the summary replaces it.
      fx.mock.script(textReply("SUMMARY: started on the parser bug."));
      const compact = await agent.prompt(sessionId, "/compact");
      assert.equal(compact.stopReason, "end_turn");
      fx.mock.script(
        textReply("Next step.").expect((req) => {
          const [, first, summary, result, last] = req.body.messages;
          assert.equal(first?.content, "Fix the parser bug and note it in the changelog.");
          assert.equal(summary?.content, "SUMMARY: started on the parser bug.");
          const call = summary?.tool_calls?.[0];
          assert.equal(call?.function.name, "todo", "the summary carries the plan as a todo call");
          assert.deepEqual(JSON.parse(call?.function.arguments ?? "{}"), { todos: FIRST });
          assert.equal(result?.tool_call_id, call?.id);
          assert.match(String(result?.content), /^Plan updated \(0\/3 completed\)/);
          assert.equal(last?.content, "Go on.");
        }),
      );
      await agent.prompt(sessionId, "Next.");
      fx.mock.assertDone();
    } finally {
      await agent.close();
    }

    const second = await spawn();
    try {
      const before = second.notifications.length;
      await second.agent.request(methods.agent.session.load, { sessionId, cwd: fx.ws.dir, mcpServers: [] });
      assert.deepEqual(plans(second.notifications.slice(before).map((n) => n.update)), [FIRST]);
    } finally {
      await second.close();
    }
  });

  test("an invalid list gets a tool error naming the entry and field, and the plan is left as it was", async () => {
    const agent = await spawn();
    try {
      const { sessionId } = await agent.newSession(fx.ws.dir);
      fx.mock.script(
        reply().toolCall("todo", { todos: FIRST }),
        reply()
          .toolCall("todo", {
            todos: [
              { content: "Find the failing test", status: "done", priority: "high" },
              { content: "  ", status: "pending", priority: "urgent" },
            ],
          })
          .expect((req) => assert.match(String(req.body.messages.at(-1)?.content), /^Plan updated/)),
        textReply("Let me fix the list.").expect((req) => {
          const error = String(req.body.messages.at(-1)?.content);
          assert.match(error, /^Error: invalid arguments for todo:/);
          assert.match(error, /todos\.0\.status: .*"pending"\|"in_progress"\|"completed"/);
          assert.match(error, /todos\.1\.content: must be a non-empty description/);
          assert.match(error, /todos\.1\.priority: .*"high"\|"medium"\|"low"/);
        }),
      );
      const turn = await agent.prompt(sessionId, "Plan it.");
      assert.equal(turn.stopReason, "end_turn");
      assert.deepEqual(plans(turn.updates), [FIRST], "no plan update for the invalid list");
      const failed = turn.updates.filter((u) => u.sessionUpdate === "tool_call_update" && u.status === "failed");
      assert.equal(failed.length, 1);
      fx.mock.assertDone();
    } finally {
      await agent.close();
    }
  });
});
