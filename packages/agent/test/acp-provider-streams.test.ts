/**
 * A Mistral reasoning model's stream (content as thinking/text parts) through the built `crow acp`: the user sees the
 * thoughts and the answer while it streams, and the stored session replays both after a restart.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { chunkText, loadReplay, PROVIDER_STREAMS, recordedReply, textReply, useAcpFixture } from "@crow/testkit";

const THOUGHTS = "The user is asking for 2 + 2. Simple arithmetic.";
const ANSWER = "2 + 2 = 4.";

describe("crow acp: providers' stream shapes", () => {
  const fx = useAcpFixture({ startAgent: false });

  test("a Mistral thinking stream shows thoughts and answer, and the stored session replays them", async () => {
    let sessionId = "";
    const first = await fx.spawn();
    try {
      ({ sessionId } = await first.newSession(fx.ws.dir));
      fx.mock.script(recordedReply(PROVIDER_STREAMS.mistralThinking));
      const turn = await first.prompt(sessionId, "what is 2 + 2?");
      assert.equal(turn.stopReason, "end_turn");
      assert.equal(chunkText(turn.updates, "agent_thought_chunk"), THOUGHTS);
      assert.equal(chunkText(turn.updates, "agent_message_chunk"), ANSWER);
    } finally {
      await first.close();
    }

    const second = await fx.spawn();
    try {
      const replayed = await loadReplay(second, sessionId, fx.ws.dir);
      const text = (t: string) => ({ type: "text" as const, text: t });
      // Message ids have their own test (acp-message-ids): here, what is shown.
      const shown = replayed.map((update) => {
        const { messageId: _id, ...rest } = update as typeof update & { messageId?: unknown };
        return rest;
      });
      assert.deepEqual(shown, [
        { sessionUpdate: "user_message_chunk", content: text("what is 2 + 2?") },
        { sessionUpdate: "agent_thought_chunk", content: text(THOUGHTS) },
        { sessionUpdate: "agent_message_chunk", content: text(ANSWER) },
      ]);
      // The stored answer goes back to the model as text, with its reasoning, on the next turn.
      fx.mock.script(
        textReply("Yes.").expect((req) => {
          const answer = req.body.messages.find((m) => m.role === "assistant");
          assert.equal(answer?.content, ANSWER);
          assert.equal(answer?.reasoning_content, THOUGHTS);
        }),
      );
      const next = await second.prompt(sessionId, "sure?");
      assert.equal(chunkText(next.updates, "agent_message_chunk"), "Yes.");
      fx.mock.assertDone();
    } finally {
      await second.close();
    }
  });
});
