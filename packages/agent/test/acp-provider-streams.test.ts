/**
 * A Mistral reasoning model's stream (content as thinking/text parts) through the built `crow acp`: the user sees the
 * thoughts and the answer while it streams, and the stored session replays both after a restart.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { methods, type SessionUpdate } from "@agentclientprotocol/sdk";
import {
  type MockLlm,
  PROVIDER_STREAMS,
  recordedReply,
  spawnAcpAgent,
  startMockLlm,
  type TempWorkspace,
  tempWorkspace,
  textReply,
} from "@crow/testkit";

const THOUGHTS = "The user is asking for 2 + 2. Simple arithmetic.";
const ANSWER = "2 + 2 = 4.";

/** The text of the updates of one kind, joined (how an editor shows the streamed chunks). */
function joined(updates: SessionUpdate[], kind: "agent_thought_chunk" | "agent_message_chunk"): string {
  return updates.map((u) => (u.sessionUpdate === kind && u.content.type === "text" ? u.content.text : "")).join("");
}

describe("crow acp: providers' stream shapes", () => {
  let mock: MockLlm;
  let ws: TempWorkspace;
  let home: string;
  const spawn = () => spawnAcpAgent({ llmUrl: mock.url, env: { CROW_HOME: home } });

  before(async () => {
    mock = await startMockLlm();
    ws = await tempWorkspace();
    home = await mkdtemp(path.join(tmpdir(), "crow-home-"));
  });
  after(async () => {
    await mock.close();
    await ws.cleanup();
    await rm(home, { recursive: true, force: true });
  });

  test("a Mistral thinking stream shows thoughts and answer, and the stored session replays them", async () => {
    let sessionId = "";
    const first = await spawn();
    try {
      ({ sessionId } = await first.newSession(ws.dir));
      mock.script(recordedReply(PROVIDER_STREAMS.mistralThinking));
      const turn = await first.prompt(sessionId, "what is 2 + 2?");
      assert.equal(turn.stopReason, "end_turn");
      assert.equal(joined(turn.updates, "agent_thought_chunk"), THOUGHTS);
      assert.equal(joined(turn.updates, "agent_message_chunk"), ANSWER);
    } finally {
      await first.close();
    }

    const second = await spawn();
    try {
      const before = second.notifications.length;
      await second.agent.request(methods.agent.session.load, { sessionId, cwd: ws.dir, mcpServers: [] });
      const replayed = second.notifications
        .slice(before)
        .filter((n) => n.sessionId === sessionId)
        .map((n) => n.update)
        .filter((u) => u.sessionUpdate.endsWith("_chunk"));
      const text = (t: string) => ({ type: "text" as const, text: t });
      assert.deepEqual(replayed, [
        { sessionUpdate: "user_message_chunk", content: text("what is 2 + 2?") },
        { sessionUpdate: "agent_thought_chunk", content: text(THOUGHTS) },
        { sessionUpdate: "agent_message_chunk", content: text(ANSWER) },
      ]);
      // The stored answer goes back to the model as text, with its reasoning, on the next turn.
      mock.script(
        textReply("Yes.").expect((req) => {
          const answer = req.body.messages.find((m) => m.role === "assistant");
          assert.equal(answer?.content, ANSWER);
          assert.equal(answer?.reasoning_content, THOUGHTS);
        }),
      );
      const next = await second.prompt(sessionId, "sure?");
      assert.equal(joined(next.updates, "agent_message_chunk"), "Yes.");
      mock.assertDone();
    } finally {
      await second.close();
    }
  });
});
