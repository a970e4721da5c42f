/**
 * The editor quits mid-turn (stdin closes): what streamed is stored as a cancel would store it, before the store
 * closes, so a later `session/load` shows the partial answer and the interrupted tool call. Before, the agent logged
 * "a assistant message was not stored: … driver has already been destroyed" and the reload showed only the prompt.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import { loadReplay, reply, useAcpFixture } from "@crow/testkit";

const texts = (updates: SessionUpdate[]) =>
  updates.map((u) =>
    "content" in u && u.content && !Array.isArray(u.content) && u.content.type === "text"
      ? `${u.sessionUpdate}: ${u.content.text}`
      : u.sessionUpdate === "tool_call_update"
        ? `${u.sessionUpdate}: ${u.status}`
        : u.sessionUpdate,
  );

describe("crow acp: stdin closing mid-turn keeps what streamed", () => {
  const fx = useAcpFixture({ startAgent: false });

  test("mid-stream: the partial answer is stored and replayed", async () => {
    const first = await fx.spawn();
    const { sessionId } = await first.newSession(fx.ws.dir);
    fx.mock.script(reply().text("Once upon a time").hang());
    first.prompt(sessionId, "tell me a story").catch(() => {});
    await first.waitForUpdate(sessionId, (u) => u.sessionUpdate === "agent_message_chunk");
    await first.close();
    assert.doesNotMatch(first.stderr(), /was not stored/);

    const second = await fx.spawn();
    try {
      assert.deepEqual(texts(await loadReplay(second, sessionId, fx.ws.dir)), [
        "user_message_chunk: tell me a story",
        "agent_message_chunk: Once upon a time",
      ]);
    } finally {
      await second.close();
    }
  });

  test("mid-tool-call: the call is stored as cancelled, with the text before it", async () => {
    const first = await fx.spawn();
    const { sessionId } = await first.newSession(fx.ws.dir);
    fx.mock.script(reply().text("Running it.").toolCall("terminal", { command: "sleep 30" }));
    first.prompt(sessionId, "run the slow job").catch(() => {});
    await first.waitForUpdate(sessionId, (u) => u.sessionUpdate === "tool_call_update" && u.status === "in_progress");
    await first.close();
    assert.doesNotMatch(first.stderr(), /was not stored/);

    const second = await fx.spawn();
    try {
      const replayed = await loadReplay(second, sessionId, fx.ws.dir);
      assert.deepEqual(texts(replayed), [
        "user_message_chunk: run the slow job",
        "agent_message_chunk: Running it.",
        "tool_call",
        "tool_call_update: failed",
      ]);
      assert.match(JSON.stringify(replayed.at(-1)), /cancel/i, "the stored result says it was cancelled");
    } finally {
      await second.close();
    }
  });
});
