/**
 * Sessions survive the agent: `kill -9` mid-stream and mid-tool-call leave a session that loads and continues with a
 * valid history (the mock LLM checks the tool-call invariant on every request), and two agent processes sharing one
 * PostgreSQL store load each other's sessions.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { methods, type SessionUpdate } from "@agentclientprotocol/sdk";
import {
  type AcpTestClient,
  findPostgresBin,
  loadReplay,
  type PostgresServer,
  reply,
  startPostgres,
  textReply,
  useAcpFixture,
} from "@crow/testkit";

const MISSING_TOOL_RESULT = "Tool call cancelled: no result was produced.";

async function kill9(agent: AcpTestClient): Promise<void> {
  const exited = new Promise((resolve) => agent.process.once("exit", resolve));
  agent.process.kill("SIGKILL");
  await exited;
  await agent.close();
}

const texts = (updates: SessionUpdate[]) =>
  updates.map((u) =>
    "content" in u && u.content && !Array.isArray(u.content) && u.content.type === "text"
      ? `${u.sessionUpdate}: ${u.content.text}`
      : u.sessionUpdate === "tool_call_update"
        ? `${u.sessionUpdate}: ${u.status}`
        : u.sessionUpdate,
  );

describe("crow acp: kill -9 leaves a session that loads and continues", () => {
  const fx = useAcpFixture({ startAgent: false });

  test("killed during streaming: the user message is kept, the half-streamed answer is not", async () => {
    const first = await fx.spawn();
    const { sessionId } = await first.newSession(fx.ws.dir);
    fx.mock.script(reply().text("Once upon a time").hang());
    first.prompt(sessionId, "tell me a story").catch(() => {});
    await first.waitForUpdate(sessionId, (u) => u.sessionUpdate === "agent_message_chunk");
    await kill9(first);

    const second = await fx.spawn();
    try {
      assert.deepEqual(texts(await loadReplay(second, sessionId, fx.ws.dir)), ["user_message_chunk: tell me a story"]);
      fx.mock.script(
        textReply("Sorry, I was cut off.").expect((req) => {
          assert.deepEqual(
            req.body.messages.map((m) => [m.role, m.content]),
            [
              ["system", req.body.messages[0]?.content],
              ["user", "tell me a story"],
              ["user", "are you back?"],
            ],
          );
        }),
      );
      assert.equal((await second.prompt(sessionId, "are you back?")).stopReason, "end_turn");
      fx.mock.assertDone();
    } finally {
      await second.close();
    }
  });

  test("killed during a tool call: the call gets a synthetic result and the history stays valid", async () => {
    const first = await fx.spawn();
    const { sessionId } = await first.newSession(fx.ws.dir);
    fx.mock.script(reply().text("Running it.").toolCall("terminal", { command: "sleep 30" }, { id: "call_k" }));
    first.prompt(sessionId, "run the slow job").catch(() => {});
    await first.waitForUpdate(sessionId, (u) => u.sessionUpdate === "tool_call_update" && u.status === "in_progress");
    await kill9(first);

    const second = await fx.spawn();
    try {
      assert.deepEqual(texts(await loadReplay(second, sessionId, fx.ws.dir)), [
        "user_message_chunk: run the slow job",
        "agent_message_chunk: Running it.",
        "tool_call",
        "tool_call_update: failed",
      ]);
      fx.mock.script(
        textReply("It was interrupted.").expect((req) => {
          const [, user, assistant, tool, next] = req.body.messages;
          assert.equal(user?.content, "run the slow job");
          assert.equal(assistant?.tool_calls?.[0]?.id, "call_k");
          assert.deepEqual([tool?.role, tool?.tool_call_id, tool?.content], ["tool", "call_k", MISSING_TOOL_RESULT]);
          assert.equal(next?.content, "what happened?");
          assert.equal(req.body.messages.length, 5);
        }),
      );
      assert.equal((await second.prompt(sessionId, "what happened?")).stopReason, "end_turn");
      fx.mock.assertDone();
    } finally {
      await second.close();
    }
  });
});

describe("crow acp: two agent processes sharing one PostgreSQL store", {
  skip: findPostgresBin() ? undefined : "PostgreSQL is not installed",
}, () => {
  const fx = useAcpFixture({ startAgent: false });
  let pg: PostgresServer;
  let url: string;

  before(async () => {
    pg = await startPostgres();
    url = await pg.createDatabase();
  });
  after(async () => {
    await pg?.stop();
  });

  test("each loads and continues the other's sessions, once the other has closed it", async () => {
    const a = await fx.spawn({ env: { CROW_DB_URI: url } });
    const b = await fx.spawn({ env: { CROW_DB_URI: url } });
    try {
      const { sessionId } = await a.newSession(fx.ws.dir);
      fx.mock.script(textReply("Hello from A."));
      await a.prompt(sessionId, "first, on A");

      const listed = await b.agent.request(methods.agent.session.list, { cwd: fx.ws.dir });
      assert.deepEqual(
        listed.sessions.map((s) => [s.sessionId, s.title]),
        [[sessionId, "first, on A"]],
      );
      // Open in A: B may not load it behind A's back (one live owner per session, across hosts sharing the database).
      await assert.rejects(loadReplay(b, sessionId, fx.ws.dir), /open in another Crow process/);
      await a.agent.request(methods.agent.session.close, { sessionId });
      assert.deepEqual(texts(await loadReplay(b, sessionId, fx.ws.dir)), [
        "user_message_chunk: first, on A",
        "agent_message_chunk: Hello from A.",
      ]);
      fx.mock.script(textReply("Hello from B."));
      await b.prompt(sessionId, "then, on B");

      await b.agent.request(methods.agent.session.close, { sessionId });
      assert.deepEqual(texts(await loadReplay(a, sessionId, fx.ws.dir)), [
        "user_message_chunk: first, on A",
        "agent_message_chunk: Hello from A.",
        "user_message_chunk: then, on B",
        "agent_message_chunk: Hello from B.",
      ]);
      const other = await b.newSession(fx.ws.dir);
      fx.mock.script(textReply("B's own."));
      await b.prompt(other.sessionId, "a session of B");
      await b.agent.request(methods.agent.session.close, { sessionId: other.sessionId });
      assert.deepEqual(texts(await loadReplay(a, other.sessionId, fx.ws.dir)), [
        "user_message_chunk: a session of B",
        "agent_message_chunk: B's own.",
      ]);
      fx.mock.assertDone();
    } finally {
      await a.close();
      await b.close();
    }
  });
});
