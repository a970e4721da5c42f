/**
 * ACP message ids (`messageId` on message chunks): every chunk of one message carries the same id, each message its
 * own, the ids are stored with the messages and come back the same when the session is loaded, and they never
 * reach the model.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { methods, type SessionUpdate } from "@agentclientprotocol/sdk";
import { reply, textReply, useAcpFixture } from "@crow/testkit";

type Chunk = { kind: string; messageId: string | null | undefined; text: string };

/** The message chunks of `updates`, in order, with their ids. */
function chunks(updates: readonly SessionUpdate[]): Chunk[] {
  return updates.flatMap((u) =>
    u.sessionUpdate === "agent_message_chunk" ||
    u.sessionUpdate === "agent_thought_chunk" ||
    u.sessionUpdate === "user_message_chunk"
      ? [{ kind: u.sessionUpdate, messageId: u.messageId, text: u.content.type === "text" ? u.content.text : "" }]
      : [],
  );
}

describe("crow acp: message ids on message chunks, kept on replay", () => {
  const fx = useAcpFixture();

  test("one id per message on all its chunks, a new one per message; load replays the same ids", async () => {
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    fx.mock.script(
      reply()
        .reasoning("Let me look first.", "reasoning_content", 3)
        .text("Looking.", 2)
        .toolCall("terminal", { command: "echo hi" }),
      reply()
        .text("All done, it said hi.", 4)
        .expect((req) => {
          for (const message of req.body.messages) assert.ok(!("id" in message), "ids are not sent to the model");
        }),
    );
    const turn = await fx.agent.prompt(sessionId, "say hi");
    assert.equal(turn.stopReason, "end_turn");
    const live = chunks(turn.updates);
    const ids = [...new Set(live.map((c) => c.messageId))];
    assert.equal(ids.length, 2, `two messages, two ids: ${JSON.stringify(live)}`);
    for (const id of ids) assert.match(id ?? "", /^[0-9a-f-]{36}$/);
    const [firstId, secondId] = ids;
    // The first message's thought and text chunks share its id (however the deltas were joined into chunks); the
    // answer after the tool has the other one.
    const textOf = (id: string | null | undefined, kind: string) =>
      live
        .filter((c) => c.messageId === id && c.kind === kind)
        .map((c) => c.text)
        .join("");
    assert.equal(textOf(firstId, "agent_thought_chunk"), "Let me look first.");
    assert.equal(textOf(firstId, "agent_message_chunk"), "Looking.");
    assert.equal(
      live
        .filter((c) => c.messageId === secondId)
        .map((c) => c.text)
        .join(""),
      "All done, it said hi.",
    );

    // A second prompt: its answer gets a fresh id.
    fx.mock.script(textReply("Again."));
    const again = chunks((await fx.agent.prompt(sessionId, "again")).updates);
    const thirdId = again[0]?.messageId;
    assert.ok(thirdId && !ids.includes(thirdId));

    // Loaded by another agent: every message comes back with the id it streamed with, users' messages with theirs.
    await fx.agent.agent.request(methods.agent.session.close, { sessionId });
    const other = await fx.spawn();
    await other.agent.request(methods.agent.session.load, { sessionId, cwd: fx.ws.dir, mcpServers: [] });
    const replayed = chunks(other.updates(sessionId));
    assert.deepEqual(
      replayed.map((c) => [c.kind, c.text]),
      [
        ["user_message_chunk", "say hi"],
        ["agent_thought_chunk", "Let me look first."],
        ["agent_message_chunk", "Looking."],
        ["agent_message_chunk", "All done, it said hi."],
        ["user_message_chunk", "again"],
        ["agent_message_chunk", "Again."],
      ],
    );
    assert.deepEqual(
      replayed.filter((c) => c.kind !== "user_message_chunk").map((c) => c.messageId),
      [firstId, firstId, secondId, thirdId],
    );
    const users = replayed.filter((c) => c.kind === "user_message_chunk").map((c) => c.messageId);
    assert.equal(new Set(users).size, 2);
    for (const id of users) assert.match(id ?? "", /^[0-9a-f-]{36}$/);
    assert.ok(!users.some((id) => [firstId, secondId, thirdId].includes(id)));

    // And again: ids are stored, not made up at each load.
    await other.agent.request(methods.agent.session.close, { sessionId });
    const third = await fx.spawn();
    await third.agent.request(methods.agent.session.load, { sessionId, cwd: fx.ws.dir, mcpServers: [] });
    assert.deepEqual(
      chunks(third.updates(sessionId)).map((c) => c.messageId),
      replayed.map((c) => c.messageId),
    );
    fx.mock.assertDone();
  });
});
