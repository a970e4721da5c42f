/**
 * A tool result's display (migration 0007) is stored with it, on SQLite and on a real PostgreSQL server: read back
 * with the message, by the page, as the session's tool displays, copied by a fork; a diff over 1 MiB is left out
 * (the rest of the display kept); rows stored before the migration load without one.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type ChatMessage, openStore, type Store, type ToolDisplay } from "@crow/core";
import { type Kysely, sql } from "kysely";
import { storeBackends } from "./store-backends.js";

const call = (id: string): ChatMessage => ({
  role: "assistant",
  content: "",
  tool_calls: [{ id, type: "function", function: { name: "edit", arguments: '{"file_path":"a.ts"}' } }],
});
const result = (id: string): ChatMessage => ({ role: "tool", tool_call_id: id, content: "Edited a.ts" });
const display: ToolDisplay = {
  title: "edit: /w/a.ts",
  locations: [{ path: "/w/a.ts", line: 2 }],
  diff: { path: "/w/a.ts", oldText: "one\ntwo\nthree\n", newText: "one\n2\nthree\n" },
  via: "crow-mcp",
};

for (const backend of storeBackends("crow-display")) {
  describe(`tool displays on ${backend.name}`, { skip: backend.skip }, () => {
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

    test("a tool result's display is stored, read back, listed and forked", async () => {
      const session = await store.createSession({ cwd: "/w" });
      await store.appendMessages(session.id, [
        { message: { role: "user", content: "fix a.ts" } },
        { message: call("c1") },
      ]);
      await store.appendMessages(session.id, [
        { message: result("c1"), outcome: { isError: false, durationMs: 4, display } },
      ]);
      const stored = await store.loadMessages(session.id);
      assert.deepEqual(stored[2]?.outcome, { isError: false, durationMs: 4, display });
      assert.deepEqual((await store.loadMessagePage(session.id, { fromSeq: 2 }))[0]?.outcome?.display, display);
      assert.deepEqual(await store.loadToolDisplays(session.id), [{ seq: 2, toolCallId: "c1", display }]);
      const fork = await store.forkSession(session.id);
      assert.deepEqual((await store.loadMessages(fork.id))[2]?.outcome?.display, display);
    });

    test("a diff over 1 MiB is not stored; the rest of its display is", async () => {
      const session = await store.createSession({ cwd: "/w" });
      const big = `${"x".repeat(1024 * 1024)}\n`;
      const huge: ToolDisplay = { ...display, diff: { path: "/w/big.txt", oldText: null, newText: big } };
      await store.appendMessages(session.id, [
        { message: call("c2") },
        { message: result("c2"), outcome: { isError: false, durationMs: 1, display: huge } },
      ]);
      const { diff: _left, ...rest } = huge;
      assert.deepEqual((await store.loadMessages(session.id))[1]?.outcome?.display, rest);
    });

    test("rows stored before migration 0007 load without a display; new rows get one", async () => {
      const session = await store.createSession({ cwd: "/w" });
      await store.appendMessages(session.id, [
        { message: call("c3") },
        { message: result("c3"), outcome: { isError: false, durationMs: 2, display } },
      ]);
      // Back to the 0006 schema, as an earlier Crow left it, then opened again by this one.
      const db = (store as unknown as { db: Kysely<unknown> }).db;
      await sql`alter table messages drop column display`.execute(db);
      await sql`alter table eval_trials drop column details`.execute(db);
      await sql`drop table session_leases`.execute(db);
      await sql`delete from crow_migrations where name >= '0007'`.execute(db);
      await store.close();
      store = await openStore(uri);
      const [, old] = await store.loadMessages(session.id);
      assert.deepEqual(old?.outcome, { isError: false, durationMs: 2 });
      assert.deepEqual(await store.loadToolDisplays(session.id), []);
      await store.appendMessages(session.id, [
        { message: call("c4") },
        { message: result("c4"), outcome: { isError: false, durationMs: 3, display } },
      ]);
      assert.deepEqual(await store.loadToolDisplays(session.id), [{ seq: 3, toolCallId: "c4", display }]);
    });
  });
}
