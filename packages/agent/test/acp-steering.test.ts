/**
 * `_session/steering` through the built `crow acp`, against a scripted model whose turns run several slow tool rounds
 * (a real `sleep` in the shell): steers sent at random moments across many turns are each seen by the model exactly
 * once, in order, inside their own turn, and nothing streams after a prompt has answered. Idle steers start nothing;
 * a reload replays the steers where they were; a cancel drops the steers the model has not seen and says so.
 *
 * CROW_TEST_STEERS scales the stress test (default 60 steers; the 300 run in `CROW_TEST_STEERS=300`).
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { methods, type SessionUpdate } from "@agentclientprotocol/sdk";
import { type CapturedRequest, type MockMessage, reply, textReply, useAcpFixture } from "@crow/testkit";

const STEER = "_session/steering";
const TOOL_ROUNDS = 3;

interface SteerAnswer {
  outcome: string;
  reason?: string;
}

function textOf(message: MockMessage): string {
  const { content } = message;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((p) => (p && typeof p === "object" && "text" in p ? String(p.text) : "")).join("");
}

/** The model: TOOL_ROUNDS slow tool rounds after the turn's prompt, then an answer streamed in a few pieces. */
function model(request: CapturedRequest) {
  const messages = request.body.messages;
  const start = messages.findLastIndex((m) => m.role === "user" && textOf(m).startsWith("turn "));
  const turn = start >= 0 ? textOf(messages[start] as MockMessage).split(" ")[1] : "?";
  const rounds = messages.slice(start).filter((m) => m.role === "assistant" && m.tool_calls?.length).length;
  if (rounds < TOOL_ROUNDS) return reply().text(`t${turn} working `).toolCall("terminal", { command: "sleep 0.2" });
  return reply().text(`t${turn} answer, `).delay(30).text("in pieces, ").delay(30).text(`t${turn} done`);
}

function userChunkText(update: SessionUpdate): string | undefined {
  if (update.sessionUpdate !== "user_message_chunk" || update.content.type !== "text") return undefined;
  return update.content.text;
}

function randomDelay(max: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * max)));
}

describe("crow acp: _session/steering", () => {
  const fx = useAcpFixture();

  test("initialize advertises the steering extension", () => {
    const meta = fx.agent.initialize._meta as { steering?: { supported?: unknown } } | undefined;
    assert.equal(meta?.steering?.supported, true);
  });

  test("an idle steer starts nothing: promptRequired when the client opted in, else failed", async () => {
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    // A round trip: the session's introduction (its commands) is in before counting.
    await fx.agent.agent.request(methods.agent.session.list, {});
    const requests = fx.mock.requests.length;
    const before = fx.agent.updates(sessionId).length;
    const optedIn = (await fx.agent.agent.request(STEER, {
      sessionId,
      prompt: [{ type: "text", text: "also do this" }],
      _meta: { steering: { idleBehavior: "promptRequired" } },
    })) as SteerAnswer;
    assert.deepEqual(optedIn, { outcome: "promptRequired", reason: "noRunningTurn" });
    const plain = (await fx.agent.agent.request(STEER, {
      sessionId,
      prompt: [{ type: "text", text: "also do this" }],
    })) as SteerAnswer;
    assert.equal(plain.outcome, "failed");
    assert.equal(plain.reason, "noRunningTurn");
    // A round trip: anything the steers had started would have streamed by now.
    await fx.agent.agent.request(methods.agent.session.list, {});
    assert.equal(fx.mock.requests.length, requests, "no model request");
    assert.equal(fx.agent.updates(sessionId).length, before, "no update");
    await assert.rejects(fx.agent.agent.request(STEER, { sessionId, prompt: [] }), /prompt is empty/);
    await assert.rejects(
      fx.agent.agent.request(STEER, { sessionId: "no-such-session", prompt: [{ type: "text", text: "x" }] }),
      /not found/i,
    );
  });

  test("steers at random moments across many turns: none lost, none duplicated, none after the answer", async (t) => {
    const total = Number(process.env.CROW_TEST_STEERS ?? 60);
    const perTurn = 6;
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    fx.mock.respond(model);
    const injected: string[] = [];
    const refused: string[] = [];
    /** The steers in the order they were sent (the random delays reorder them). */
    const order: string[] = [];
    let sent = 0;
    for (let turn = 1; sent < total; turn++) {
      const first = fx.mock.requests.length;
      const prompt = fx.agent.prompt(sessionId, `turn ${turn}`);
      let answeredAt: number | undefined;
      let requestsAtAnswer = 0;
      const answered = prompt.then((result) => {
        answeredAt = fx.agent.notifications.length;
        requestsAtAnswer = fx.mock.requests.length;
        return result;
      });
      const steers: Array<Promise<{ text: string; answer: SteerAnswer }>> = [];
      const count = Math.min(perTurn, total - sent);
      for (let i = 0; i < count; i++, sent++) {
        const text = `steer ${turn}.${i}`;
        // Random moments: most land during tool rounds or streaming, a burst of two at once keeps its order.
        const wait = i % 3 === 1 ? 0 : 900;
        steers.push(
          randomDelay(wait).then(async () => {
            order.push(text);
            const answer = (await fx.agent.agent.request(STEER, {
              sessionId,
              prompt: [{ type: "text", text }],
              _meta: { steering: { idleBehavior: "promptRequired" } },
            })) as SteerAnswer;
            return { text, answer };
          }),
        );
      }
      const result = await answered;
      const settled = await Promise.all(steers);
      assert.equal(result.stopReason, "end_turn");
      // A round trip after every steer answered: an update the turn still owed would have arrived before it.
      await fx.agent.agent.request(methods.agent.session.list, {});
      assert.equal(fx.agent.notifications.length, answeredAt, `turn ${turn}: updates after the prompt's answer`);
      const seen = fx.mock.requests.slice(first, requestsAtAnswer).flatMap((r) => r.body.messages.map(textOf));
      const shown = result.updates.map(userChunkText).filter((t) => t !== undefined);
      for (const { text, answer } of settled) {
        if (answer.outcome === "injected") {
          injected.push(text);
          assert.ok(seen.includes(text), `${text}: acknowledged injected but the model never saw it in its turn`);
          assert.ok(shown.includes(text), `${text}: not shown to the client as the user's message`);
        } else {
          assert.equal(answer.outcome, "promptRequired", `${text}: ${JSON.stringify(answer)}`);
          refused.push(text);
        }
      }
    }
    fx.mock.respond(undefined);
    // The history the model gets next: every injected steer once, in the order sent, the refused ones nowhere.
    fx.mock.script(textReply("all read"));
    await fx.agent.prompt(sessionId, "that is all");
    const history = (fx.mock.requests.at(-1)?.body.messages ?? []).filter((m) => m.role === "user").map(textOf);
    const steersInHistory = history.filter((t) => t.startsWith("steer "));
    const sentOrder = order.filter((t) => injected.includes(t));
    assert.deepEqual(steersInHistory, sentOrder, "each injected steer once, in the order sent");
    for (const text of refused) assert.ok(!history.includes(text), `${text} was refused but joined the history`);
    assert.ok(injected.length > total / 2, `most steers landed in a turn (${injected.length} of ${total})`);
    t.diagnostic(`${total} steers: ${injected.length} injected, ${refused.length} after their turn (promptRequired)`);
    fx.mock.assertDone();

    // A reload replays the prompts and steers where they were (closed here first: one live owner per session).
    await fx.agent.agent.request(methods.agent.session.close, { sessionId });
    const other = await fx.spawn();
    try {
      await other.agent.request(methods.agent.session.load, { sessionId, cwd: fx.ws.dir, mcpServers: [] });
      const replayed = other
        .updates(sessionId)
        .map(userChunkText)
        .filter((t) => t !== undefined);
      assert.deepEqual(replayed, history);
    } finally {
      await other.close();
    }
  });

  test("a cancel drops the steers the model has not seen, and says so", async () => {
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    fx.mock.script(reply().toolCall("terminal", { command: "sleep 30" }));
    const prompt = fx.agent.prompt(sessionId, "wait a while");
    await fx.agent.waitForUpdate(
      sessionId,
      (u) => u.sessionUpdate === "tool_call_update" && u.status === "in_progress",
    );
    const answer = (await fx.agent.agent.request(STEER, {
      sessionId,
      prompt: [{ type: "text", text: "never mind that" }],
    })) as SteerAnswer;
    assert.equal(answer.outcome, "injected");
    await fx.agent.cancel(sessionId);
    const turn = await prompt;
    assert.equal(turn.stopReason, "cancelled");
    const said = turn.updates.some((u) => JSON.stringify(u).includes("1 steering message was not sent to the model"));
    assert.ok(said, "the drop is told to the user");
    fx.mock.script(textReply("ok"));
    await fx.agent.prompt(sessionId, "are you there?");
    const texts = (fx.mock.requests.at(-1)?.body.messages ?? []).map(textOf);
    assert.ok(!texts.includes("never mind that"), "the dropped steer is not in the history");
    fx.mock.assertDone();
  });
});
