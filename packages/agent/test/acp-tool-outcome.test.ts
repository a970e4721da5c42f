/**
 * The store keeps each tool result's error flag and duration, end to end: the built `crow acp`, the mock LLM, the
 * SQLite store in a private CROW_HOME; and the viewer shows a call as failed from that flag, whatever its text.
 */
import assert from "node:assert/strict";
import path from "node:path";
import { describe, test } from "node:test";
import { openStore } from "@crow/core";
import { reply, textReply, useAcpFixture } from "@crow/testkit";
import { timelinePage } from "../src/viewer/timeline.js";

describe("crow acp: tool results keep their error flag and duration in the store", () => {
  const fx = useAcpFixture();

  test("a failed call and a successful one, stored with isError and durationMs", async () => {
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    fx.mock.script(
      reply()
        .toolCall("read", { file_path: fx.ws.path("missing.txt") }, { id: "call_missing" })
        .toolCall("write", { file_path: fx.ws.path("made.txt"), content: "x\n" }, { id: "call_made" }),
      textReply("One failed, one worked."),
    );
    assert.equal((await fx.agent.prompt(sessionId, "read one, write one")).stopReason, "end_turn");
    const store = await openStore(path.join(fx.crowHome, "crow.db"));
    try {
      const tools = (await store.loadMessages(sessionId)).filter((m) => m.message.role === "tool");
      const byCall = new Map(tools.map((m) => [(m.message as { tool_call_id: string }).tool_call_id, m.outcome]));
      assert.equal(byCall.get("call_missing")?.isError, true);
      assert.equal(byCall.get("call_made")?.isError, false);
      for (const outcome of byCall.values()) {
        assert.ok(Number.isInteger(outcome?.durationMs) && (outcome?.durationMs ?? -1) >= 0, String(outcome));
      }
    } finally {
      await store.close();
    }
  });
});

test("the viewer takes a call's status from the stored flag; old rows without it are read from the text", async () => {
  const store = await openStore(":memory:");
  try {
    const session = await store.createSession({ cwd: "/work" });
    const call = (id: string) => ({ id, type: "function" as const, function: { name: "terminal", arguments: "{}" } });
    await store.appendMessages(session.id, [
      { message: { role: "user", content: "run it" } },
      { message: { role: "assistant", content: "", tool_calls: [call("flagged"), call("old")] } },
      // The command printed something ordinary but exited 1: only the flag tells.
      {
        message: { role: "tool", tool_call_id: "flagged", content: "done" },
        outcome: { isError: true, durationMs: 1500 },
      },
      { message: { role: "tool", tool_call_id: "old", content: "Error: no such command" } },
    ]);
    const page = String((await timelinePage(store, session.id, 0)).html);
    assert.match(
      page,
      /<details class="tool status-error" data-call-id="flagged"[\s\S]*?<span class="duration">1\.5 s<\/span>/,
    );
    assert.match(page, /<details class="tool status-error" data-call-id="old"/);
  } finally {
    await store.close();
  }
});
