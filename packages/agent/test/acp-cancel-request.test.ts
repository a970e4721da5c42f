import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { reply, textReply, useAcpFixture } from "@crow/testkit";

/** The agent's answer to the request `id`, as it went over the wire. */
async function answerTo(
  fx: ReturnType<typeof useAcpFixture>,
  id: string,
): Promise<{ result?: { stopReason?: string }; error?: { code: number; message: string } }> {
  const line = await fx.agent.waitForLine((l) => l.includes(`"id":"${id}"`));
  return JSON.parse(line) as { result?: { stopReason?: string }; error?: { code: number; message: string } };
}

describe("crow acp: $/cancel_request cancels the request it names", () => {
  const fx = useAcpFixture();

  test("a running session/prompt ends cancelled, and the session stays usable", async () => {
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    fx.mock.script(
      reply().text("Working on it").hang(),
      textReply("Still here.").expect((req) => {
        // The cancelled turn's partial answer is kept, then the new prompt.
        assert.equal(req.body.messages.at(-2)?.content, "Working on it");
        assert.equal(req.body.messages.at(-1)?.content, "are you there?");
      }),
    );
    // Sent raw: the SDK client abandons a request it cancels, and the test wants the agent's own answer.
    const id = "prompt-to-cancel";
    const answer = answerTo(fx, id);
    fx.agent.writeRaw(
      JSON.stringify({
        jsonrpc: "2.0",
        id,
        method: "session/prompt",
        params: { sessionId, prompt: [{ type: "text", text: "a long job" }] },
      }),
    );
    await fx.agent.waitForUpdate(sessionId, (u) => u.sessionUpdate === "agent_message_chunk");
    fx.agent.writeRaw(JSON.stringify({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: id } }));
    const answered = await answer;
    assert.equal(answered.error, undefined, `answered ${JSON.stringify(answered)}`);
    assert.equal(answered.result?.stopReason, "cancelled");

    const next = await fx.agent.prompt(sessionId, "are you there?");
    assert.equal(next.stopReason, "end_turn");
    fx.mock.assertDone();
  });

  test("a running _crow/compact stops, answers -32800 and leaves the history as it was", async () => {
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    fx.mock.script(textReply("First answer."), textReply("Second answer."));
    await fx.agent.prompt(sessionId, "first question");
    await fx.agent.prompt(sessionId, "second question");
    // The summary request hangs until the compaction is cancelled.
    fx.mock.script(reply().text("A summary that never ends").hang());
    const seen = fx.mock.requests.length;
    const id = "compact-to-cancel";
    const answer = answerTo(fx, id);
    fx.agent.writeRaw(JSON.stringify({ jsonrpc: "2.0", id, method: "_crow/compact", params: { sessionId } }));
    await fx.mock.waitForRequests(seen + 1);
    fx.agent.writeRaw(JSON.stringify({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: id } }));
    const answered = await answer;
    assert.equal(answered.error?.code, -32800, `answered ${JSON.stringify(answered)}`);
    assert.match(answered.error?.message ?? "", /cancelled/);

    // The session is free again and its history whole: the next request carries both earlier exchanges.
    fx.mock.script(
      textReply("Third answer.").expect((req) => {
        const users = req.body.messages.filter((m) => m.role === "user").map((m) => m.content);
        assert.deepEqual(users, ["first question", "second question", "third question"]);
      }),
    );
    assert.equal((await fx.agent.prompt(sessionId, "third question")).stopReason, "end_turn");
    fx.mock.assertDone();
  });
});
