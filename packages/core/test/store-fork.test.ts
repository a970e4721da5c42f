/**
 * `Store.forkSession` on a SQLite file and on a real PostgreSQL server (skipped, with the reason, only when
 * PostgreSQL is not installed), plus the 0002 migration upgrading a store made before forks existed.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type ChatMessage, openStore, SessionNotFoundError, type Store } from "@crow/core";
import { MIGRATIONS } from "@crow/core/internal";
import { type Kysely, sql } from "kysely";
import { storeBackends } from "./store-backends.js";

const usage = { promptTokens: 120, completionTokens: 30, totalTokens: 150 };
const history: ChatMessage[] = [
  { role: "user", content: "Fix the test" },
  {
    role: "assistant",
    content: null,
    tool_calls: [{ id: "c1", type: "function", function: { name: "read", arguments: '{"file_path":"/w/a"}' } }],
  },
  { role: "tool", tool_call_id: "c1", content: "def add(a, b): return a - b" },
  { role: "assistant", content: "Found it: add() subtracts." },
];

for (const backend of storeBackends("crow-fork")) {
  describe(`session forks on ${backend.name}`, { skip: backend.skip }, () => {
    let uri: string;
    let store: Store;
    before(async () => {
      uri = await backend.create();
      store = await openStore(uri);
    });
    after(async () => {
      await store?.close();
      await backend.cleanup();
    });

    async function source() {
      const prompt = await store.getOrCreatePrompt("system_prompt", "You are Crow in {{ workspace }}.");
      const created = await store.createSession({
        cwd: "/w",
        title: "Fix the test",
        mode: "ask",
        model: "fast",
        promptId: prompt.id,
        promptArgs: { workspace: "/w", date: "2026-11-23" },
        systemPrompt: "You are Crow in /w.",
        toolDefinitions: [{ type: "function", function: { name: "read", description: "read", parameters: {} } }],
        requestParams: { temperature: 0.2 },
      });
      await store.appendMessages(created.id, [{ message: { role: "user", content: "an old turn" } }]);
      // A compaction archived that turn: the fork gets the current history, not the archive.
      await store.replaceMessages(created.id, []);
      await store.appendMessages(
        created.id,
        history.map((message, i) => (i === 1 || i === 3 ? { message, usage } : { message })),
      );
      return (await store.getSession(created.id)) ?? assert.fail("stored");
    }

    test("a fork is a new session with the source's settings, prompt version and whole current history", async () => {
      const original = await source();
      const fork = await store.forkSession(original.id);
      assert.notEqual(fork.id, original.id);
      assert.equal(fork.forkedFrom, original.id);
      assert.equal(original.forkedFrom, null);
      const { id: _a, forkedFrom: _b, createdAt: _c, updatedAt: _d, ...copied } = fork;
      const { id: _e, forkedFrom: _f, createdAt: _g, updatedAt: _h, ...expected } = original;
      assert.deepEqual(copied, expected);
      assert.equal((await store.getSession(fork.id))?.forkedFrom, original.id, "the link is stored");
      const [forked, stored] = [await store.loadMessages(fork.id), await store.loadMessages(original.id)];
      assert.deepEqual(forked, stored, "same messages, seqs, usage and timestamps");
      assert.deepEqual(
        forked.map((m) => m.message),
        history,
      );
      assert.deepEqual(await store.listArchives(fork.id), [], "archives stay with the source");
      const listed = (await store.listSessions()).sessions.map((s) => s.id);
      assert.ok(listed.includes(fork.id) && listed.includes(original.id));
    });

    test("the fork and its source go separate ways; a fork can move to another directory", async () => {
      const original = await source();
      const fork = await store.forkSession(original.id, { cwd: "/elsewhere" });
      assert.equal(fork.cwd, "/elsewhere");
      await store.appendMessages(fork.id, [{ message: { role: "user", content: "only in the fork" } }]);
      await store.appendMessages(original.id, [{ message: { role: "user", content: "only in the source" } }]);
      const last = async (id: string) => (await store.loadMessages(id)).at(-1)?.message.content;
      assert.equal(await last(fork.id), "only in the fork");
      assert.equal(await last(original.id), "only in the source");
      assert.equal(await store.countMessages(fork.id), history.length + 1);
      const again = await store.forkSession(fork.id);
      assert.equal(again.forkedFrom, fork.id, "forks of forks link to their own source");
      assert.equal(await store.countMessages(again.id), history.length + 1);
      // Deleting the source leaves its forks whole.
      assert.equal(await store.deleteSession(original.id), true);
      assert.equal(await store.countMessages(fork.id), history.length + 1);
    });

    test("additional directories are stored, updated, and kept by a fork unless it is given its own", async () => {
      const session = await store.createSession({ cwd: "/work/a", additionalDirectories: ["/work/b", "/work/c"] });
      assert.deepEqual(session.additionalDirectories, ["/work/b", "/work/c"]);
      assert.deepEqual((await store.getSession(session.id))?.additionalDirectories, ["/work/b", "/work/c"]);
      const listed = (await store.listSessions({ cwd: "/work/a" })).sessions.find((s) => s.id === session.id);
      assert.deepEqual(listed?.additionalDirectories, ["/work/b", "/work/c"]);
      assert.deepEqual((await store.forkSession(session.id)).additionalDirectories, ["/work/b", "/work/c"]);
      const own = await store.forkSession(session.id, { additionalDirectories: ["/work/d"] });
      assert.deepEqual(own.additionalDirectories, ["/work/d"]);
      const cleared = await store.updateSession(session.id, { additionalDirectories: [] });
      assert.deepEqual(cleared.additionalDirectories, []);
      assert.deepEqual((await store.createSession({ cwd: "/work/a" })).additionalDirectories, []);
    });

    test("unknown sessions and archives cannot be forked", async () => {
      await assert.rejects(store.forkSession("no-such-session"), SessionNotFoundError);
      const original = await source();
      const [archive] = await store.listArchives(original.id);
      assert.ok(archive);
      await assert.rejects(store.forkSession(archive.id), SessionNotFoundError);
    });

    test("a store made before forks existed is upgraded when opened", async () => {
      assert.deepEqual(MIGRATIONS.slice(1), [
        "0002_session_forks",
        "0003_eval",
        "0004_tool_result_outcome",
        "0005_additional_directories",
        "0006_checkpoints",
        "0007_tool_display",
        "0008_eval_trial_details",
        "0009_session_leases",
      ]);
      const before = await source();
      // Back to the 0001 schema: what an earlier Crow left behind (the later migrations undone too).
      const db = (store as unknown as { db: Kysely<unknown> }).db;
      await sql`drop table checkpoints`.execute(db);
      await sql`drop table session_leases`.execute(db);
      await sql`drop table eval_trials`.execute(db);
      await sql`drop table eval_runs`.execute(db);
      await sql`alter table messages drop column is_error`.execute(db);
      await sql`alter table messages drop column duration_ms`.execute(db);
      await sql`alter table messages drop column display`.execute(db);
      await sql`alter table sessions drop column forked_from`.execute(db);
      await sql`alter table sessions drop column additional_directories`.execute(db);
      await sql`delete from crow_migrations where name >= '0002'`.execute(db);
      await store.close();
      store = await openStore(uri);
      const kept = await store.getSession(before.id);
      assert.equal(kept?.forkedFrom, null);
      assert.deepEqual(kept?.additionalDirectories, []);
      assert.equal(kept?.title, "Fix the test");
      const fork = await store.forkSession(before.id);
      assert.equal(fork.forkedFrom, before.id);
    });
  });
}
