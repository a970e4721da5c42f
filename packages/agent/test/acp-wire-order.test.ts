// The order a client sees is the order things happened: streamed text, then the call it announces, then the
// question about that call, then what the call did, then the answer's text.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import { reply, textReply, useAcpFixture } from "@crow/testkit";

describe("crow acp: one outbox per session, in the order of its events", () => {
  /** The updates the client had, as kinds, when it was asked. */
  let seenWhenAsked: string[] = [];
  const fx = useAcpFixture({
    agent: {
      permissions: (request) => {
        seenWhenAsked = fx.agent.updates(request.sessionId).map(kindOf);
        return "allow_once";
      },
    },
  });

  test("text, tool call, question, result, answer arrive in that order", async () => {
    const file = await fx.ws.write("a.txt", "one\n");
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    await fx.agent.agent.request("session/set_mode", { sessionId, modeId: "ask" });
    fx.mock.script(
      reply().text("Let me change it.", 8).toolCall("write", { file_path: file, content: "two\n" }),
      textReply("Done."),
    );
    const turn = await fx.agent.prompt(sessionId, "change a.txt");
    assert.equal(turn.stopReason, "end_turn");
    // Kinds of the turn's own updates, a run of text chunks as one (how many chunks the text takes may vary).
    const turnOnly = (kinds: string[]) =>
      kinds
        .filter((k) => k.startsWith("agent_message") || k.startsWith("tool_call"))
        .filter((k, i, all) => k !== "agent_message_chunk" || all[i - 1] !== k);
    // All of the text came before the question, then the call with its proposal.
    assert.deepEqual(turnOnly(seenWhenAsked), ["agent_message_chunk", "tool_call", "tool_call_update"]);
    const all = turnOnly(fx.agent.updates(sessionId).map(kindOf));
    assert.deepEqual(all.slice(0, 3), turnOnly(seenWhenAsked));
    assert.deepEqual(all.slice(-1), ["agent_message_chunk"]);
    const text = fx.agent
      .updates(sessionId)
      .flatMap((u) => (u.sessionUpdate === "agent_message_chunk" && u.content.type === "text" ? [u.content.text] : []))
      .join("");
    assert.equal(text, "Let me change it.Done.");
    fx.mock.assertDone();
  });
});

function kindOf(update: SessionUpdate): string {
  return update.sessionUpdate;
}
