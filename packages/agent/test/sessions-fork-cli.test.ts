import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { after, before, describe, test } from "node:test";
import { openStore, type Store } from "@crow/core";
import {
  CROW_BIN,
  findPostgresBin,
  type MockLlm,
  type PostgresServer,
  startMockLlm,
  startPostgres,
  type TempWorkspace,
  tempWorkspace,
  textReply,
} from "@crow/testkit";
import { runCrow, runEnv } from "./run-helpers.js";

/** Runs the built `crow sessions …` with CROW_HOME set, no config but what the test wrote. */
function crowSessions(home: string, args: string[]) {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.startsWith("CROW_") && !key.startsWith("OPENAI_")) env[key] = value;
  }
  const run = spawnSync(process.execPath, [CROW_BIN, "sessions", ...args], {
    encoding: "utf8",
    env: { ...env, CROW_HOME: home },
  });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

function behaves(kind: string, setup: (ws: TempWorkspace) => Promise<{ store: Store; cleanup: () => Promise<void> }>) {
  describe(`crow sessions fork on ${kind}`, () => {
    let ws: TempWorkspace;
    let store: Store;
    let mock: MockLlm;
    let cleanup: () => Promise<void>;
    let source: string;
    before(async () => {
      ws = await tempWorkspace();
      mock = await startMockLlm();
      ({ store, cleanup } = await setup(ws));
      const created = await store.createSession({ cwd: ws.dir, title: "Arithmetic", mode: "code" });
      await store.appendMessages(created.id, [
        { message: { role: "user", content: "What is 2+2?" } },
        { message: { role: "assistant", content: "4" } },
      ]);
      source = created.id;
    });
    after(async () => {
      await store.close();
      await mock.close();
      await cleanup();
      await ws.cleanup();
    });

    test("prints the new id (stdout) and how to continue it; the fork carries the history and its link", async () => {
      const forked = crowSessions(ws.dir, ["fork", source]);
      assert.equal(forked.code, 0, forked.stderr);
      const id = forked.stdout.trim();
      assert.match(forked.stdout, /^[a-z0-9-]+\n$/, "stdout is the id alone, for scripts");
      assert.notEqual(id, source);
      assert.match(forked.stderr, new RegExp(`Forked ${source} as ${id} \\(2 messages, working directory `));
      assert.ok(forked.stderr.includes(`Continue it with: crow run -s ${id} -c ${ws.dir}`), forked.stderr);
      const record = await store.getSession(id);
      assert.equal(record?.forkedFrom, source);
      assert.equal(record?.title, "Arithmetic");
      assert.deepEqual(
        (await store.loadMessages(id)).map((m) => m.message),
        (await store.loadMessages(source)).map((m) => m.message),
      );
      const shown = crowSessions(ws.dir, ["show", id]);
      assert.match(shown.stdout, new RegExp(`- forked from: ${source}`));

      // Continuing it as printed: the model sees the copied history; the source does not get the new turn.
      mock.script(
        textReply("12").expect((req) => {
          const said = req.body.messages.filter((m) => m.role !== "system").map((m) => String(m.content));
          assert.deepEqual(said, ["What is 2+2?", "4", "and times 3?"]);
        }),
      );
      const run = await runCrow(["-s", id, "-c", ws.dir, "and times 3?"], { env: runEnv(mock.url, ws.dir) });
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stdout, /12/);
      mock.assertDone();
      assert.equal(await store.countMessages(id), 4);
      assert.equal(await store.countMessages(source), 2);
    });

    test("--cwd moves the fork and --json prints its record", async () => {
      const forked = crowSessions(ws.dir, ["fork", source, "--cwd", "/tmp", "--json"]);
      assert.equal(forked.code, 0, forked.stderr);
      const record = JSON.parse(forked.stdout) as { id: string; cwd: string; forkedFrom: string };
      assert.equal(record.cwd, "/tmp");
      assert.equal(record.forkedFrom, source);
      assert.equal((await store.getSession(record.id))?.cwd, "/tmp");
    });

    test("unknown ids and bad usage are explained", () => {
      const missing = crowSessions(ws.dir, ["fork", "no-such-session"]);
      assert.equal(missing.code, 2);
      assert.match(missing.stderr, /no session no-such-session in .*'crow sessions list' shows the ids/);
      for (const [args, message] of [
        [["fork"], /fork takes exactly one session id/],
        [["fork", "a", "b"], /fork takes exactly one session id/],
        [["fork", source, "--cwd", "relative/dir"], /--cwd must be an absolute path, got "relative\/dir"/],
      ] as const) {
        const usage = crowSessions(ws.dir, [...args]);
        assert.equal(usage.code, 2, args.join(" "));
        assert.match(usage.stderr, message);
      }
      assert.match(crowSessions(ws.dir, ["--help"]).stdout, /fork ID \[--cwd DIR\]/);
    });
  });
}

behaves("SQLite (the default store in CROW_HOME)", async (ws) => ({
  store: await openStore(ws.path("crow.db")),
  cleanup: async () => {},
}));

let pg: PostgresServer | undefined;
behaves("PostgreSQL (db_uri in config.yaml)", async (ws) => {
  if (!findPostgresBin()) throw new Error("PostgreSQL 15 binaries are not installed (apt-get install -y postgresql)");
  pg = await startPostgres();
  writeFileSync(ws.path("config.yaml"), `db_uri: ${pg.url}\n`);
  return { store: await openStore(pg.url), cleanup: async () => pg?.stop() };
});
