/**
 * One store suite, run against a SQLite file and against a real PostgreSQL server started here from the installed
 * binaries (skipped, with the reason, only when PostgreSQL is not installed).
 */
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { type ChatMessage, openStore, SessionNotFoundError, type Store, StoreError } from "@crow/core";
import { findPostgresBin, type PostgresServer, startPostgres } from "@crow/testkit";
import { type Kysely, sql } from "kysely";

interface Backend {
  name: string;
  skip?: string;
  open(): Promise<Store>;
  /** Opens a second, independent connection to the same database (another process would). */
  openAgain(): Promise<Store>;
  cleanup(): Promise<void>;
}

function sqliteBackend(): Backend {
  let dir = "";
  return {
    name: "SQLite",
    async open() {
      dir = await mkdtemp(path.join(tmpdir(), "crow-store-"));
      return openStore(`sqlite:///${dir}/nested/crow.db`);
    },
    openAgain: () => openStore(path.join(dir, "nested", "crow.db")),
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
}

function postgresBackend(): Backend {
  let server: PostgresServer | undefined;
  let url = "";
  const backend: Backend = {
    name: "PostgreSQL",
    async open() {
      server = await startPostgres();
      url = await server.createDatabase();
      return openStore(url);
    },
    openAgain: () => openStore(url),
    cleanup: async () => server?.stop(),
  };
  if (!findPostgresBin()) backend.skip = "PostgreSQL is not installed (apt-get install -y postgresql)";
  return backend;
}

const user = (content: string): ChatMessage => ({ role: "user", content });
const usage = { promptTokens: 120, completionTokens: 30, totalTokens: 150, cachedTokens: 100 };
const assistantWithCall: ChatMessage = {
  role: "assistant",
  content: null,
  reasoning_content: "I should look.",
  tool_calls: [{ id: "call_1", type: "function", function: { name: "read", arguments: '{"file_path":"/a"}' } }],
};

for (const backend of [sqliteBackend(), postgresBackend()]) {
  describe(`store on ${backend.name}`, { skip: backend.skip }, () => {
    let store: Store;
    before(async () => {
      store = await backend.open();
    });
    after(async () => {
      await store?.close();
      await backend.cleanup();
    });

    test("a session keeps its fields and its messages in order, with usage on assistant rows", async () => {
      const created = await store.createSession({
        cwd: "/work/project",
        mode: "ask",
        model: "gpt-x",
        systemPrompt: "You are Crow.",
        promptArgs: { workspace: "/work/project", tree: ["a", "b"] },
        toolDefinitions: [{ type: "function", function: { name: "read", parameters: { type: "object" } } }],
        requestParams: { temperature: 0.2 },
      });
      assert.match(created.id, /^[a-z]+-[a-z]+-[a-z]+-[0-9a-f]{6}$/);
      const messages: ChatMessage[] = [
        user("read /a"),
        assistantWithCall,
        { role: "tool", tool_call_id: "call_1", content: "hello ünïcødé 🐦" },
        { role: "assistant", content: "It says hello." },
      ];
      const seqs = await store.appendMessages(created.id, [
        { message: messages[0] as ChatMessage },
        { message: messages[1] as ChatMessage, usage },
      ]);
      assert.deepEqual(seqs, [0, 1]);
      assert.deepEqual(await store.appendMessages(created.id, [{ message: messages[2] as ChatMessage }]), [2]);
      await store.appendMessages(created.id, [{ message: messages[3] as ChatMessage, usage }]);

      const loaded = await store.loadMessages(created.id);
      assert.deepEqual(
        loaded.map((m) => m.message),
        messages,
      );
      assert.deepEqual(
        loaded.map((m) => m.seq),
        [0, 1, 2, 3],
      );
      assert.deepEqual(loaded[1]?.usage, usage);
      assert.equal(loaded[0]?.usage, undefined);
      assert.equal(await store.countMessages(created.id), 4);

      const again = await store.getSession(created.id);
      assert.equal(again?.cwd, "/work/project");
      assert.equal(again?.mode, "ask");
      assert.deepEqual(again?.promptArgs, { workspace: "/work/project", tree: ["a", "b"] });
      assert.deepEqual(again?.requestParams, { temperature: 0.2 });
      assert.equal(again?.toolDefinitions?.[0]?.function.name, "read");
      assert.ok((again?.updatedAt ?? "") >= created.updatedAt);
    });

    test("updates bump updatedAt; unknown sessions are reported", async () => {
      const s = await store.createSession({ cwd: "/p" });
      await new Promise((r) => setTimeout(r, 5));
      const updated = await store.updateSession(s.id, { title: "Fix the bug", model: "other", mode: "read-only" });
      assert.equal(updated.title, "Fix the bug");
      assert.equal(updated.model, "other");
      assert.ok(updated.updatedAt > s.updatedAt);
      await assert.rejects(store.updateSession("no-such-session", { title: "x" }), SessionNotFoundError);
      await assert.rejects(store.appendMessages("no-such-session", [{ message: user("x") }]), SessionNotFoundError);
      await assert.rejects(store.createSession({ id: s.id, cwd: "/p" }), StoreError);
      assert.deepEqual(await store.loadMessages("no-such-session"), []);
      assert.equal(await store.getSession("no-such-session"), undefined);
    });

    test("prompts are versioned by name and content", async () => {
      const v1 = await store.getOrCreatePrompt("system_prompt", "You are {{ name }}.");
      const same = await store.getOrCreatePrompt("system_prompt", "You are {{ name }}.");
      const v2 = await store.getOrCreatePrompt("system_prompt", "You are {{ name }}, in {{ workspace }}.");
      const other = await store.getOrCreatePrompt("summary", "You are {{ name }}.");
      assert.equal(same.id, v1.id);
      assert.equal(v1.version, 1);
      assert.equal(v2.version, 2);
      assert.equal(other.version, 1);
      assert.notEqual(v1.id, other.id);
      assert.equal((await store.getPrompt(v2.id))?.content, "You are {{ name }}, in {{ workspace }}.");
      assert.deepEqual(
        (await store.listPromptVersions("system_prompt")).map((p) => p.version),
        [1, 2],
      );
      // Concurrent first stores of one content end up as one version.
      const racing = await Promise.all([1, 2, 3, 4].map(() => store.getOrCreatePrompt("raced", "same content")));
      assert.equal(new Set(racing.map((p) => p.id)).size, 1);
    });

    test("listing: newest first, cwd filter, cursor pages cover every live session once, archives left out", async () => {
      const cwd = `/list/${backend.name}`;
      const ids: string[] = [];
      for (let i = 0; i < 7; i++) ids.push((await store.createSession({ cwd, title: `s${i}` })).id);
      const tick = () => new Promise((r) => setTimeout(r, 5));
      await tick();
      await store.appendMessages(ids[2] as string, [{ message: user("bump") }]);
      await tick();
      await store.replaceMessages(ids[3] as string, []);

      const seen: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await store.listSessions({ cwd, limit: 3, ...(cursor ? { cursor } : {}) });
        seen.push(...page.sessions.map((s) => s.id));
        cursor = page.nextCursor;
        pages++;
      } while (cursor);
      assert.equal(pages, 3);
      assert.deepEqual([...seen].sort(), [...ids].sort());
      // The session that got a message most recently comes first... after the one whose history was replaced.
      assert.deepEqual(seen.slice(0, 2), [ids[3], ids[2]]);
      const all = await store.listSessions({ limit: 500 });
      assert.ok(all.sessions.every((s) => s.archivedFrom === null));
      assert.equal((await store.listSessions({ cwd: "/nowhere" })).sessions.length, 0);
      await assert.rejects(store.listSessions({ cursor: "garbage!" }), StoreError);
    });

    test("session leases: one owner at a time, claims racing have one winner, expired or released leases go", async () => {
      const holder = (owner: string) => ({ owner, host: "h", pid: 1, agent: "test" });
      const later = new Date(Date.now() + 60_000).toISOString();
      const past = new Date(Date.now() - 1000).toISOString();
      const claims = await Promise.all(
        ["a", "b", "c", "d"].map((o) => store.leases.claim(`lease-${backend.name}`, holder(o), later)),
      );
      const winner = claims[0]?.owner;
      assert.ok(
        claims.every((c) => c.owner === winner),
        "every claimer sees the one winner",
      );
      const loser = winner === "a" ? "b" : "a";
      assert.equal((await store.leases.claim(`lease-${backend.name}`, holder(loser), later)).owner, winner);
      // The winner's renewal keeps it; a loser's renewal tells it that it holds nothing.
      assert.deepEqual(await store.leases.renew(winner as string, [`lease-${backend.name}`], later), []);
      assert.deepEqual(await store.leases.renew(loser, [`lease-${backend.name}`], later), [`lease-${backend.name}`]);
      // Replacing the known owner (it died, or is taken over) works; the old owner learns it lost it.
      assert.equal((await store.leases.claim(`lease-${backend.name}`, holder(loser), later, winner)).owner, loser);
      assert.deepEqual(await store.leases.renew(winner as string, [`lease-${backend.name}`], later), [
        `lease-${backend.name}`,
      ]);
      // A release by someone else changes nothing; by the owner, frees it.
      await store.leases.release(`lease-${backend.name}`, winner as string);
      assert.equal((await store.leases.claim(`lease-${backend.name}`, holder("z"), later)).owner, loser);
      await store.leases.release(`lease-${backend.name}`, loser);
      assert.equal((await store.leases.claim(`lease-${backend.name}`, holder("z"), past)).owner, "z");
      // Expired: anyone may claim it.
      assert.equal((await store.leases.claim(`lease-${backend.name}`, holder("y"), later)).owner, "y");
    });

    test("listing what a user resumes: prompted sessions only, no subagent children", async () => {
      const cwd = `/resume/${backend.name}`;
      const empty = await store.createSession({ cwd });
      const spoken = await store.createSession({ cwd });
      await store.appendMessages(spoken.id, [{ message: user("hello") }]);
      const titled = await store.createSession({ cwd, title: "named" });
      const cleared = await store.createSession({ cwd });
      await store.appendMessages(cleared.id, [{ message: user("gone") }]);
      await store.replaceMessages(cleared.id, []);
      const child = await store.createSession({ cwd, parentId: spoken.id });
      await store.appendMessages(child.id, [{ message: user("task") }]);
      const ids = async (options: { prompted?: boolean; topLevel?: boolean }) =>
        (await store.listSessions({ cwd, ...options })).sessions.map((s) => s.id).sort();
      assert.deepEqual(await ids({}), [empty.id, spoken.id, titled.id, cleared.id, child.id].sort());
      assert.deepEqual(await ids({ prompted: true }), [spoken.id, titled.id, cleared.id, child.id].sort());
      assert.deepEqual(await ids({ prompted: true, topLevel: true }), [spoken.id, titled.id, cleared.id].sort());
    });

    test("replaceMessages swaps the history atomically and keeps the old one as an inspectable archive", async () => {
      const s = await store.createSession({ cwd: "/c", systemPrompt: "old prompt" });
      const original: ChatMessage[] = [user("first"), { role: "assistant", content: "a" }, user("last")];
      await store.appendMessages(
        s.id,
        original.map((message) => ({ message })),
      );
      const compacted: ChatMessage[] = [user("first"), { role: "assistant", content: "summary" }, user("last")];
      const archiveId = await store.replaceMessages(
        s.id,
        compacted.map((message) => ({ message })),
        { patch: { systemPrompt: "new prompt" } },
      );
      assert.deepEqual(
        (await store.loadMessages(s.id)).map((m) => m.message),
        compacted,
      );
      assert.deepEqual(
        (await store.loadMessages(archiveId)).map((m) => m.message),
        original,
      );
      assert.equal((await store.getSession(s.id))?.systemPrompt, "new prompt");
      const archive = await store.getSession(archiveId);
      assert.equal(archive?.archivedFrom, s.id);
      assert.equal(archive?.systemPrompt, "old prompt");
      // Appends continue after the new history.
      assert.deepEqual(await store.appendMessages(s.id, [{ message: user("more") }]), [3]);
      const second = await store.replaceMessages(s.id, []);
      assert.deepEqual(
        (await store.listArchives(s.id)).map((a) => a.id),
        [archiveId, second],
      );
      await assert.rejects(store.replaceMessages("missing", []), SessionNotFoundError);
    });

    test("archives made one right after another are listed in the order they were made", async () => {
      const s = await store.createSession({ cwd: "/c" });
      const made: string[] = [];
      // Back to back: several land in the same millisecond, which once left their order to their random ids.
      for (let i = 0; i < 12; i++) made.push(await store.replaceMessages(s.id, [{ message: user(`v${i}`) }]));
      assert.deepEqual(
        (await store.listArchives(s.id)).map((a) => a.id),
        made,
      );
    });

    test("delete removes the session, its messages and its archives", async () => {
      const s = await store.createSession({ cwd: "/d" });
      await store.appendMessages(s.id, [{ message: user("x") }]);
      const archiveId = await store.replaceMessages(s.id, [{ message: user("y") }]);
      assert.equal(await store.deleteSession(s.id), true);
      assert.equal(await store.getSession(s.id), undefined);
      assert.equal(await store.getSession(archiveId), undefined);
      assert.deepEqual(await store.loadMessages(s.id), []);
      assert.deepEqual(await store.loadMessages(archiveId), []);
      assert.equal(await store.deleteSession(s.id), false);
    });

    test("a second connection sees the same data, and reopening does not re-run migrations", async () => {
      const s = await store.createSession({ cwd: "/shared" });
      const other = await backend.openAgain();
      try {
        await other.appendMessages(s.id, [{ message: user("from the other process") }]);
        await store.appendMessages(s.id, [{ message: user("from this one") }]);
        assert.deepEqual(
          (await other.loadMessages(s.id)).map((m) => m.message.content),
          ["from the other process", "from this one"],
        );
      } finally {
        await other.close();
      }
    });

    test("a large history round-trips in order", async () => {
      const s = await store.createSession({ cwd: "/big" });
      const messages = Array.from({ length: 1200 }, (_, i) => ({ message: user(`message ${i}`) }));
      await store.appendMessages(s.id, messages);
      const loaded = await store.loadMessages(s.id);
      assert.equal(loaded.length, 1200);
      assert.equal(loaded[1199]?.message.content, "message 1199");
    });
  });
}

describe("SQLite prepared-statement reuse", () => {
  test("a reused query after an abandoned stream of it, and more distinct queries than the cache holds", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "crow-store-"));
    const store = await openStore(path.join(dir, "crow.db"));
    try {
      const { db } = store as unknown as { db: Kysely<{ sessions: { id: string } }> };
      for (const id of ["s1", "s2", "s3"]) await store.createSession({ id, cwd: "/w" });
      const query = () => db.selectFrom("sessions").select("id").orderBy("id");
      for await (const row of query().stream()) {
        assert.equal(row.id, "s1");
        break;
      }
      assert.deepEqual(
        (await query().execute()).map((r) => r.id),
        ["s1", "s2", "s3"],
      );
      for (let i = 0; i < 250; i++) {
        const { rows } = await sql<{ n: number }>`select ${sql.raw(String(i))} as n`.execute(db);
        assert.equal(rows[0]?.n, i);
      }
      assert.deepEqual(
        (await query().execute()).map((r) => r.id),
        ["s1", "s2", "s3"],
      );
    } finally {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("opening a store migrated by another Crow version", () => {
  test("one migrated further by a newer Crow is refused with the migration named, not used as if current", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "crow-store-"));
    const file = path.join(dir, "crow.db");
    try {
      const store = await openStore(file);
      const db = (store as unknown as { db: Kysely<unknown> }).db;
      await sql`insert into crow_migrations (name, timestamp) values ('9999_from_a_newer_crow', '2030-01-01')`.execute(
        db,
      );
      await store.close();
      await assert.rejects(openStore(file), (error: unknown) => {
        assert.ok(error instanceof StoreError);
        assert.match(error.message, /9999_from_a_newer_crow/);
        return true;
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
