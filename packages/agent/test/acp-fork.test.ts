import assert from "node:assert/strict";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { type ListSessionsResponse, methods, type NewSessionResponse } from "@agentclientprotocol/sdk";
import { openStore } from "@crow/core";
import {
  type AcpTestClient,
  findPostgresBin,
  type MockLlm,
  type PostgresServer,
  startPostgres,
  type TempWorkspace,
  textReply,
  useAcpFixture,
} from "@crow/testkit";

/** What `session/fork` answers (unstable ACP; the same shape as session/new's answer). */
type ForkResponse = NewSessionResponse;

/** The non-system messages of a request, as `role: text`. */
function said(req: { body: { messages: Array<{ role: string; content?: unknown }> } }): string[] {
  return req.body.messages.filter((m) => m.role !== "system").map((m) => `${m.role}: ${String(m.content)}`);
}

function behaves(kind: string, store: () => Promise<{ env: Record<string, string>; stop: () => Promise<void> }>) {
  describe(`crow acp: session/fork on ${kind}`, () => {
    const fx = useAcpFixture({ startAgent: false });
    let mock: MockLlm;
    let ws: TempWorkspace;
    let agent: AcpTestClient;
    let stop: () => Promise<void> = async () => {};
    let dbUri: string | undefined;

    before(async () => {
      ({ mock, ws } = fx);
      const backend = await store();
      stop = backend.stop;
      dbUri = backend.env.CROW_DB_URI;
      agent = await fx.spawn({ env: backend.env });
    });
    after(async () => {
      await agent.close();
      await stop();
    });

    const fork = (sessionId: string, cwd = ws.dir) =>
      agent.agent.request<ForkResponse>("session/fork", { sessionId, cwd, mcpServers: [] });

    test("initialize advertises sessionCapabilities.fork", () => {
      const line = agent.stdoutLines.find((l) => l.includes('"protocolVersion"') && l.includes('"result"'));
      assert.ok(line, "the initialize answer was written");
      const answer = JSON.parse(line) as { result: { agentCapabilities: { sessionCapabilities: object } } };
      assert.deepEqual(Object.keys(answer.result.agentCapabilities.sessionCapabilities).sort(), [
        "additionalDirectories",
        "close",
        "delete",
        "fork",
        "list",
        "resume",
      ]);
    });

    test("a fork is a new session with the history so far, the mode and the system prompt; both go on apart", async () => {
      const { sessionId: source } = await agent.newSession(ws.dir);
      await agent.agent.request(methods.agent.session.setMode, { sessionId: source, modeId: "ask" });
      let systemPrompt = "";
      mock.script(
        textReply("Paris.").expect((req) => {
          systemPrompt = String(req.body.messages[0]?.content);
        }),
      );
      assert.equal((await agent.prompt(source, "Capital of France?")).stopReason, "end_turn");

      const forked = await fork(source);
      assert.notEqual(forked.sessionId, source);
      assert.equal(forked.modes?.currentModeId, "ask", "the fork keeps the source's mode");
      const title = await agent.waitForUpdate(forked.sessionId, (u) => u.sessionUpdate === "session_info_update", true);
      assert.ok(title.sessionUpdate === "session_info_update");
      assert.equal(title.title, "Capital of France?");
      assert.equal(
        agent.updates(forked.sessionId).filter((u) => u.sessionUpdate === "agent_message_chunk").length,
        0,
        "no replay: the client already shows what it forked",
      );

      mock.script(
        textReply("Berlin.").expect((req) => {
          assert.equal(String(req.body.messages[0]?.content), systemPrompt, "the same system prompt");
          assert.deepEqual(said(req), ["user: Capital of France?", "assistant: Paris.", "user: And Germany?"]);
        }),
        textReply("Rome.").expect((req) =>
          assert.deepEqual(said(req), ["user: Capital of France?", "assistant: Paris.", "user: And Italy?"]),
        ),
      );
      assert.equal((await agent.prompt(forked.sessionId, "And Germany?")).stopReason, "end_turn");
      assert.equal((await agent.prompt(source, "And Italy?")).stopReason, "end_turn");
      mock.assertDone();

      const listed = await agent.agent.request<ListSessionsResponse>(methods.agent.session.list, { cwd: ws.dir });
      const ids = listed.sessions.map((s) => s.sessionId);
      assert.ok(ids.includes(source) && ids.includes(forked.sessionId));

      // The store keeps the link and the prompt version the source was rendered from.
      const store = await openStore(dbUri ?? path.join(fx.crowHome, "crow.db"));
      try {
        const [from, to] = [await store.getSession(source), await store.getSession(forked.sessionId)];
        assert.equal(to?.forkedFrom, source);
        assert.equal(to?.promptId, from?.promptId);
        assert.deepEqual(to?.promptArgs, from?.promptArgs);
        assert.ok(to?.promptId, "a versioned prompt was recorded");
      } finally {
        await store.close();
      }

      // Loading the fork replays its own history: the copied turn and the one it had since.
      const seen = agent.updates(forked.sessionId).length;
      await agent.agent.request(methods.agent.session.load, {
        sessionId: forked.sessionId,
        cwd: ws.dir,
        mcpServers: [],
      });
      const replayed = agent
        .updates(forked.sessionId)
        .slice(seen)
        .filter((u) => u.sessionUpdate === "agent_message_chunk")
        .map((u) => (u.sessionUpdate === "agent_message_chunk" && u.content.type === "text" ? u.content.text : ""));
      assert.deepEqual(replayed.join("|").match(/Paris\.|Berlin\.|Rome\./g), ["Paris.", "Berlin."]);
    });

    test("unknown sessions, relative paths and missing params are refused", async () => {
      await assert.rejects(fork("no-such-session"), (error: { code?: number }) => error.code === -32002);
      const { sessionId } = await agent.newSession(ws.dir);
      await assert.rejects(fork(sessionId, "relative/dir"), (error: { code?: number; message: string }) => {
        assert.equal(error.code, -32602);
        assert.match(error.message + JSON.stringify(error), /cwd must be absolute/);
        return true;
      });
      await assert.rejects(
        agent.agent.request("session/fork", { cwd: ws.dir }),
        (error: { code?: number }) => error.code === -32602,
      );
    });
  });
}

behaves("SQLite", async () => ({ env: {}, stop: async () => {} }));

let pg: PostgresServer | undefined;
behaves("PostgreSQL", async () => {
  if (!findPostgresBin()) throw new Error("PostgreSQL 15 binaries are not installed (apt-get install -y postgresql)");
  pg = await startPostgres();
  return { env: { CROW_DB_URI: await pg.createDatabase() }, stop: async () => pg?.stop() };
});
