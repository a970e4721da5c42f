/**
 * Tool results keep their error flag and duration in the store (migration 0003): written with the result, read back
 * with it, copied by a fork; rows stored before the migration load as they were, without an outcome.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { type ChatMessage, openStore } from "@crow/core";
import { type Kysely, sql } from "kysely";

let dir = "";
before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "crow-outcome-"));
});
after(() => rm(dir, { recursive: true, force: true }));

const call: ChatMessage = {
  role: "assistant",
  content: "",
  tool_calls: [{ id: "c1", type: "function", function: { name: "read", arguments: "{}" } }],
};
const result: ChatMessage = { role: "tool", tool_call_id: "c1", content: "no such file: a.txt" };

test("a tool result's error flag and duration are stored, read back and forked", async () => {
  const store = await openStore(`sqlite:///${dir}/one.db`);
  try {
    const session = await store.createSession({ cwd: "/tmp" });
    await store.appendMessages(session.id, [{ message: { role: "user", content: "read a.txt" } }, { message: call }]);
    await store.appendMessages(session.id, [{ message: result, outcome: { isError: true, durationMs: 37 } }]);
    const stored = await store.loadMessages(session.id);
    assert.deepEqual(
      stored.map((m) => m.outcome),
      [undefined, undefined, { isError: true, durationMs: 37 }],
    );
    const page = await store.loadMessagePage(session.id, { fromSeq: 2 });
    assert.deepEqual(page[0]?.outcome, { isError: true, durationMs: 37 });
    const fork = await store.forkSession(session.id);
    assert.deepEqual((await store.loadMessages(fork.id))[2]?.outcome, { isError: true, durationMs: 37 });
  } finally {
    await store.close();
  }
});

test("rows stored before migration 0003 load without an outcome; the upgraded store keeps new ones", async () => {
  const uri = `sqlite:///${dir}/old.db`;
  let store = await openStore(uri);
  const session = await store.createSession({ cwd: "/tmp" });
  // Back to the 0003 schema (the later migrations undone), with a tool result stored the old way.
  const db = (store as unknown as { db: Kysely<unknown> }).db;
  await sql`alter table messages drop column is_error`.execute(db);
  await sql`alter table messages drop column duration_ms`.execute(db);
  await sql`alter table messages drop column display`.execute(db);
  await sql`drop table checkpoints`.execute(db);
  await sql`drop table session_leases`.execute(db);
  await sql`alter table sessions drop column additional_directories`.execute(db);
  await sql`alter table eval_trials drop column details`.execute(db);
  await sql`delete from crow_migrations where name >= '0004'`.execute(db);
  await sql`insert into messages (session_id, seq, role, data, created_at) values (${session.id}, 0, 'tool', ${JSON.stringify(result)}, '2026-01-01T00:00:00.000Z')`.execute(
    db,
  );
  await store.close();
  store = await openStore(uri);
  try {
    const [old] = await store.loadMessages(session.id);
    assert.deepEqual(old?.message, result);
    assert.equal(old?.outcome, undefined);
    await store.appendMessages(session.id, [{ message: result, outcome: { isError: false, durationMs: 5 } }]);
    assert.deepEqual((await store.loadMessages(session.id))[1]?.outcome, { isError: false, durationMs: 5 });
  } finally {
    await store.close();
  }
});
