/**
 * The store's read queries for viewers (title search, history pages, usage, totals), on a SQLite file and on the
 * test PostgreSQL server (skipped, with the reason, only when PostgreSQL is not installed).
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type MessageInput, openStore, type Store } from "@crow/core";
import { storeBackends } from "./store-backends.js";

const turn = (n: number): MessageInput[] => [
  { message: { role: "user", content: `question ${n}` } },
  {
    message: { role: "assistant", content: `answer ${n}` },
    // Odd turns read half their prompt from the provider's cache.
    usage: {
      promptTokens: 100 * n,
      completionTokens: n,
      totalTokens: 101 * n,
      ...(n % 2 ? { cachedTokens: 50 * n } : {}),
    },
  },
];

for (const backend of storeBackends("crow-store-reads")) {
  describe(`store reads on ${backend.name}`, { skip: backend.skip }, () => {
    let store: Store;
    before(async () => {
      store = await openStore(await backend.create());
    });
    after(async () => {
      await store?.close();
      await backend.cleanup();
    });

    test("title search is case-insensitive and takes % and _ literally", async () => {
      await store.createSession({ cwd: "/w", title: "Fix the PARSER bug" });
      await store.createSession({ cwd: "/w", title: "100% coverage_goal" });
      await store.createSession({ cwd: "/w", title: "Write docs" });
      const titles = async (q: string) =>
        (await store.listSessions({ titleContains: q })).sessions.map((s) => s.title).sort();
      assert.deepEqual(await titles("parser"), ["Fix the PARSER bug"]);
      assert.deepEqual(await titles("0% c"), ["100% coverage_goal"]);
      assert.deepEqual(await titles("e_g"), ["100% coverage_goal"]);
      assert.deepEqual(await titles("%"), ["100% coverage_goal"]);
      assert.deepEqual(await titles("nothing like it"), []);
    });

    test("history pages, usage points and totals with archives folded in", async () => {
      const session = await store.createSession({ cwd: "/w", title: "long" });
      await store.appendMessages(session.id, [...turn(1), ...turn(2)]);
      await store.replaceMessages(session.id, turn(3));
      await store.appendMessages(session.id, [...turn(4), ...turn(5)]);

      const page = await store.loadMessagePage(session.id, { fromSeq: 2, limit: 3 });
      assert.deepEqual(
        page.map((m) => m.seq),
        [2, 3, 4],
      );
      assert.equal(page[0]?.message.content, "question 4");
      assert.deepEqual(await store.loadMessagePage(session.id, { fromSeq: 6 }), []);

      const usage = await store.listUsage(session.id);
      assert.deepEqual(
        usage.map((p) => [p.seq, p.usage.completionTokens]),
        [
          [1, 3],
          [3, 4],
          [5, 5],
        ],
      );

      const other = await store.createSession({ cwd: "/w" });
      const stats = await store.sessionStats([session.id, other.id, "no-such-session"]);
      assert.deepEqual(stats.get(session.id), {
        messages: 6,
        prompts: 5,
        requests: 5,
        promptTokens: 1500,
        completionTokens: 15,
        cachedTokens: 450,
        archives: 1,
      });
      assert.deepEqual(stats.get(other.id), {
        messages: 0,
        prompts: 0,
        requests: 0,
        promptTokens: 0,
        completionTokens: 0,
        cachedTokens: 0,
        archives: 0,
      });
      assert.equal(stats.has("no-such-session"), false);
    });
  });
}
