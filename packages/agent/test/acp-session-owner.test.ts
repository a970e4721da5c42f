/**
 * One live owner per session, across processes: a session open in one `crow acp` cannot be loaded into another behind
 * its back (the store's lease). The second is refused with where it is open and how to take it over while the first
 * lives; it gets it after the first closes it, after the first is killed (kill -9: no release, the dead pid is seen
 * at once on this host), or by taking it over (the first then refuses to run it). On SQLite and PostgreSQL.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { methods } from "@agentclientprotocol/sdk";
import {
  type AcpTestClient,
  findPostgresBin,
  type PostgresServer,
  startPostgres,
  textReply,
  useAcpFixture,
} from "@crow/testkit";

async function kill9(agent: AcpTestClient): Promise<void> {
  const exited = new Promise((resolve) => agent.process.once("exit", resolve));
  agent.process.kill("SIGKILL");
  await exited;
  await agent.close();
}

function load(agent: AcpTestClient, sessionId: string, cwd: string, takeOver = false) {
  return agent.agent.request(methods.agent.session.load, {
    sessionId,
    cwd,
    mcpServers: [],
    ...(takeOver ? { _meta: { "crow/takeOver": true } } : {}),
  });
}

function ownership(env: () => Record<string, string>) {
  const fx = useAcpFixture({ startAgent: false });

  test("the second process is refused while the first lives, and gets it after kill -9", async () => {
    const first = await fx.spawn({ env: env() });
    const second = await fx.spawn({ env: env() });
    try {
      const { sessionId } = await first.newSession(fx.ws.dir);
      fx.mock.script(textReply("Hello from the first."));
      await first.prompt(sessionId, "hi");
      await assert.rejects(load(second, sessionId, fx.ws.dir), (error: Error) => {
        assert.match(error.message, new RegExp(`session ${sessionId} is open in another Crow process`));
        assert.match(error.message, new RegExp(`pid ${first.process.pid}`), "says where it is open");
        assert.match(error.message, /crow\/takeOver/, "says how to take it over");
        return true;
      });
      // The first goes on undisturbed.
      fx.mock.script(textReply("Still mine."));
      assert.equal((await first.prompt(sessionId, "still there?")).stopReason, "end_turn");

      await kill9(first);
      await load(second, sessionId, fx.ws.dir);
      fx.mock.script(
        textReply("Now on the second.").expect((req) => {
          assert.equal(req.body.messages.length, 6, "the whole history: system, 2 turns, the new prompt");
        }),
      );
      assert.equal((await second.prompt(sessionId, "moved?")).stopReason, "end_turn");
      fx.mock.assertDone();
    } finally {
      await first.close();
      await second.close();
    }
  });

  test("closed in the first, it loads in the second; taking it over stops the first from running it", async () => {
    const first = await fx.spawn({ env: env() });
    const second = await fx.spawn({ env: env() });
    try {
      const { sessionId } = await first.newSession(fx.ws.dir);
      fx.mock.script(textReply("One."));
      await first.prompt(sessionId, "one");
      await first.agent.request(methods.agent.session.close, { sessionId });
      await load(second, sessionId, fx.ws.dir);

      // Back to the first by taking it over from the second, which still has it open.
      await assert.rejects(load(first, sessionId, fx.ws.dir), /open in another Crow process/);
      await load(first, sessionId, fx.ws.dir, true);
      fx.mock.script(textReply("Taken."));
      assert.equal((await first.prompt(sessionId, "mine again")).stopReason, "end_turn");
      // The second finds out at its next renewal at the latest; a prompt it runs is refused from then on.
      await second.waitForUpdate(sessionId, (u) => JSON.stringify(u).includes("was taken over"));
      await assert.rejects(second.prompt(sessionId, "and me?"), /taken over/);
      fx.mock.assertDone();
    } finally {
      await first.close();
      await second.close();
    }
  });
}

describe("crow acp: one live owner per session (SQLite)", () => {
  ownership(() => ({}));
});

describe("crow acp: one live owner per session (PostgreSQL)", {
  skip: findPostgresBin() ? false : "no PostgreSQL",
}, () => {
  let pg: PostgresServer | undefined;
  let url = "";
  before(async () => {
    pg = await startPostgres();
    url = await pg.createDatabase();
  });
  after(async () => {
    await pg?.stop();
  });
  ownership(() => ({ CROW_DB_URI: url }));
});
