import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { homedir, tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { DbUriError, openStore, StoreError } from "@crow/core";
import { crowHome, defaultDbUri, parseDbUri, redactUri } from "@crow/core/internal";

const base = "/home/someone/.crow";

test("db_uri forms: PostgreSQL URLs, SQLite URIs (absolute, relative, memory) and bare paths", () => {
  assert.deepEqual(parseDbUri("postgresql://u:p@db.example:5433/crow", base), {
    kind: "postgres",
    url: "postgresql://u:p@db.example:5433/crow",
  });
  assert.deepEqual(parseDbUri("postgres://u@localhost/crow", base), {
    kind: "postgres",
    url: "postgresql://u@localhost/crow",
  });
  assert.equal(parseDbUri("postgresql+psycopg2://u@h/db", base).kind, "postgres");
  assert.deepEqual(parseDbUri("sqlite:////var/lib/crow/crow.db", base), {
    kind: "sqlite",
    file: "/var/lib/crow/crow.db",
  });
  // SQLAlchemy reads three slashes as relative; we anchor it at the Crow home, not the editor's cwd...
  assert.deepEqual(parseDbUri("sqlite:///crow.db", base), { kind: "sqlite", file: `${base}/crow.db` });
  // ...unless its first directory exists at the root, which is what people mean by sqlite:///tmp/x.db.
  assert.deepEqual(parseDbUri("sqlite:///tmp/x.db", base), { kind: "sqlite", file: "/tmp/x.db" });
  assert.deepEqual(parseDbUri("sqlite:sub/crow.db", base), { kind: "sqlite", file: `${base}/sub/crow.db` });
  assert.deepEqual(parseDbUri("/abs/crow.db", base), { kind: "sqlite", file: "/abs/crow.db" });
  assert.deepEqual(parseDbUri("~/x/crow.db", base), { kind: "sqlite", file: path.join(homedir(), "x/crow.db") });
  assert.deepEqual(parseDbUri("rel.db", base), { kind: "sqlite", file: `${base}/rel.db` });
  for (const memory of [":memory:", "sqlite://", "sqlite::memory:"]) {
    assert.deepEqual(parseDbUri(memory, base), { kind: "sqlite", file: ":memory:" });
  }
});

test("a bad db_uri is explained: what was wrong and which forms work", () => {
  for (const bad of ["mysql://root@localhost/crow", "", "sqlite://host/crow.db", "postgresql://", "http://x/y"]) {
    assert.throws(
      () => parseDbUri(bad, base),
      (error: unknown) =>
        error instanceof DbUriError &&
        /expected postgresql:\/\//.test(error.message) &&
        /sqlite:\/\/\/\//.test(error.message),
      bad,
    );
  }
  assert.throws(
    () => parseDbUri("mysql://root:hunter2@localhost/crow", base),
    (e: Error) => !e.message.includes("hunter2"),
  );
  assert.equal(redactUri("postgresql://crow:s3cret@db:5432/crow"), "postgresql://crow:***@db:5432/crow");
});

test("defaults: CROW_DB_URI, else crow.db in CROW_HOME, else ~/.crow", () => {
  assert.equal(defaultDbUri({ CROW_DB_URI: "postgres://h/db" }), "postgres://h/db");
  assert.equal(defaultDbUri({ CROW_HOME: "/srv/crow" }), "/srv/crow/crow.db");
  assert.equal(crowHome({}), path.join(homedir(), ".crow"));
});

test("an unreachable PostgreSQL or unwritable SQLite path fails with the location in the message", async () => {
  await assert.rejects(
    openStore("postgresql://crow:pw@127.0.0.1:1/crow"),
    (e: unknown) =>
      e instanceof StoreError &&
      /cannot connect to PostgreSQL at postgresql:\/\/crow:\*\*\*@127\.0\.0\.1:1/.test(e.message),
  );
  const dir = await mkdtemp(path.join(tmpdir(), "crow-uri-"));
  try {
    const blocker = path.join(dir, "file");
    await (await import("node:fs/promises")).writeFile(blocker, "");
    await assert.rejects(
      openStore(path.join(blocker, "crow.db")),
      (e: unknown) => e instanceof StoreError && e.message.includes(blocker),
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
