/**
 * Which SQLite driver the embedded store uses: Node's own `node:sqlite` wherever this Node has it unflagged (22.13+,
 * 24: nothing to compile at install), better-sqlite3 elsewhere (Node 20) or when `CROW_SQLITE_DRIVER` says so. CI
 * runs the store tests on Node 20 (better-sqlite3) and on 22 and 24 (node:sqlite), so both drivers are covered.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { openStore } from "@crow/core";
import { sqliteDriverName } from "@crow/core/internal";

const [major = 0, minor = 0] = process.versions.node.split(".").map(Number);
const hasNodeSqlite = major > 22 || (major === 22 && minor >= 13);

test(`Node ${process.versions.node}: the store uses ${hasNodeSqlite ? "node:sqlite" : "better-sqlite3"}`, () => {
  assert.equal(sqliteDriverName({}), hasNodeSqlite ? "node:sqlite" : "better-sqlite3");
  assert.equal(sqliteDriverName({ CROW_SQLITE_DRIVER: "better-sqlite3" }), "better-sqlite3");
});

test("a store written and read back through the default driver, with WAL and the 0600 file", async () => {
  const dir = await mkdtemp(path.join(tmpdir(), "crow-driver-"));
  try {
    const store = await openStore(path.join(dir, "crow.db"));
    const session = await store.createSession({ cwd: "/tmp", title: "driver check" });
    await store.appendMessages(session.id, [{ message: { role: "user", content: "hello" } }]);
    await store.close();
    const again = await openStore(path.join(dir, "crow.db"));
    assert.equal((await again.getSession(session.id))?.title, "driver check");
    assert.deepEqual(
      (await again.loadMessages(session.id)).map((m) => m.message),
      [{ role: "user", content: "hello" }],
    );
    assert.equal((await again.listSessions({ idPrefix: session.id.slice(0, 6) })).sessions[0]?.id, session.id);
    await again.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

/**
 * The probe's connection, kept reachable until the process exits: on Node 24 better-sqlite3 12 aborts the process
 * when a connection is collected during shutdown (the store keeps its own for the same reason; see open.ts).
 */
const probes: unknown[] = [];

/** Whether better-sqlite3 loads here (built for this Node: always on Node 20; on 22/24 where CI compiled it). */
function betterSqliteLoads(): boolean {
  try {
    const Database = createRequire(import.meta.url)("better-sqlite3") as new (file: string) => { close(): void };
    const probe = new Database(":memory:");
    probe.close();
    probes.push(probe);
    return true;
  } catch {
    return false;
  }
}

test("one database file, written through node:sqlite and better-sqlite3 in turn, reads the same through both", {
  skip: !(hasNodeSqlite && betterSqliteLoads()) && "needs node:sqlite and a better-sqlite3 built for this Node",
}, async () => {
  const dir = await mkdtemp(path.join(tmpdir(), "crow-drivers-"));
  const file = path.join(dir, "crow.db");
  const through = async (driver: string | undefined, write: string): Promise<string[]> => {
    const saved = process.env.CROW_SQLITE_DRIVER;
    if (driver) process.env.CROW_SQLITE_DRIVER = driver;
    else delete process.env.CROW_SQLITE_DRIVER;
    try {
      const store = await openStore(file);
      const [first] = (await store.listSessions()).sessions;
      const id = first?.id ?? (await store.createSession({ cwd: "/tmp", id: "both-drivers-000001" })).id;
      await store.appendMessages(id, [{ message: { role: "user", content: write } }]);
      const texts = (await store.loadMessages(id)).map((m) => String(m.message.content));
      await store.close();
      return texts;
    } finally {
      if (saved === undefined) delete process.env.CROW_SQLITE_DRIVER;
      else process.env.CROW_SQLITE_DRIVER = saved;
    }
  };
  try {
    assert.deepEqual(await through(undefined, "from node:sqlite"), ["from node:sqlite"]);
    assert.deepEqual(await through("better-sqlite3", "from better-sqlite3"), [
      "from node:sqlite",
      "from better-sqlite3",
    ]);
    assert.deepEqual(await through(undefined, "again"), ["from node:sqlite", "from better-sqlite3", "again"]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("opening the store prints no ExperimentalWarning", { skip: !hasNodeSqlite && "no node:sqlite here" }, () => {
  const script = `import { openStore } from "@crow/core"; const s = await openStore(":memory:"); await s.close();`;
  const run = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
    encoding: "utf8",
    cwd: path.resolve(import.meta.dirname, ".."),
  });
  assert.equal(run.status, 0, run.stderr);
  assert.doesNotMatch(run.stderr, /ExperimentalWarning|SQLite is an experimental feature/);
});
