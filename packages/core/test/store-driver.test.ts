/**
 * Which SQLite driver the embedded store uses: Node's own `node:sqlite` wherever this Node has it unflagged (22.13+,
 * 24: nothing to compile at install), better-sqlite3 elsewhere (Node 20) or when `CROW_SQLITE_DRIVER` says so. CI
 * runs the store tests on Node 20 (better-sqlite3) and on 22 and 24 (node:sqlite), so both drivers are covered.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { openStore, sqliteDriverName } from "@crow/core";

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

test("opening the store prints no ExperimentalWarning", { skip: !hasNodeSqlite && "no node:sqlite here" }, () => {
  const script = `import { openStore } from "@crow/core"; const s = await openStore(":memory:"); await s.close();`;
  const run = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
    encoding: "utf8",
    cwd: path.resolve(import.meta.dirname, ".."),
  });
  assert.equal(run.status, 0, run.stderr);
  assert.doesNotMatch(run.stderr, /ExperimentalWarning|SQLite is an experimental feature/);
});
