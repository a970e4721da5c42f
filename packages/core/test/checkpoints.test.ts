/**
 * Workspace checkpoints through the SDK (`createRuntime`, `session.rewind`) against the mock LLM, with real files and
 * real git: no checkpoint for a turn of read-only tools, the size cap, `.gitignore`, the guard on a user's change
 * between two agent turns touching the same file, a user's GIT_DIR not leaking in,
 * the refusal of a file rewind on another host (on SQLite and on a shared PostgreSQL store), and garbage collection.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { type Crow, createLlmClient, createRuntime, type ExtensionAPI, type RuntimeOptions } from "@crow/core";
import { collectCheckpoints, shadowGitDir } from "@crow/core/internal";
import {
  findPostgresBin,
  type MockLlm,
  type PostgresServer,
  reply,
  startMockLlm,
  startPostgres,
  textReply,
} from "@crow/testkit";
import { type Kysely, sql } from "kysely";

const quiet = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

/** In-process tools: `put` writes a file (a change), `look` reads one (read-only). */
function fileTools(crow: ExtensionAPI): void {
  crow.registerTool({
    name: "put",
    description: "write a file",
    kind: "edit",
    parameters: crow.z.object({ path: crow.z.string(), text: crow.z.string() }),
    execute: async ({ path: file, text }) => {
      await writeFile(file, text);
      return "written";
    },
  });
  crow.registerTool({
    name: "look",
    description: "read a file",
    kind: "other",
    readOnly: true,
    parameters: crow.z.object({ path: crow.z.string() }),
    execute: async ({ path: file }) => readFile(file, "utf8"),
  });
}

function behaves(kind: string, storeUri: (dir: string) => Promise<string>) {
  describe(`checkpoints through the SDK on ${kind}`, () => {
    let mock: MockLlm;
    let dir: string;
    let ws: string;
    let crow: Crow;
    let options: RuntimeOptions;

    before(async () => {
      mock = await startMockLlm();
      dir = await mkdtemp(path.join(tmpdir(), "crow-cp-"));
      ws = path.join(dir, "ws");
      execFileSync("git", ["init", "-q", ws]);
      options = {
        llm: createLlmClient({ baseURL: mock.url, retry: { maxRetries: 0 } }),
        model: "mock-model",
        store: await storeUri(dir),
        home: dir,
        systemPrompt: "You are a test agent.",
        logger: quiet,
        extensions: [fileTools],
        checkpoints: { maxFileMb: 0.001 },
      };
      crow = await createRuntime(options);
    });
    after(async () => {
      await crow.close();
      await mock.close();
      await rm(dir, { recursive: true, force: true });
    });

    test("a turn of read-only tools takes no checkpoint; files over the cap and ignored ones are not captured", async () => {
      const session = await crow.newSession({ cwd: ws });
      await writeFile(path.join(ws, "seen.txt"), "seen\n");
      mock.script(reply().toolCall("look", { path: path.join(ws, "seen.txt") }), textReply("read it"));
      await session.prompt("read").result;
      assert.equal((await crow.store?.checkpoints.list(session.id))?.length, 0, "no checkpoint, no cost");

      await writeFile(path.join(ws, ".gitignore"), "ignored.log\n");
      const big = "x".repeat(4000);
      mock.script(
        reply()
          .toolCall("put", { path: path.join(ws, "small.txt"), text: "small\n" })
          .toolCall("put", { path: path.join(ws, "big.txt"), text: big })
          .toolCall("put", { path: path.join(ws, "ignored.log"), text: "log\n" }),
        textReply("wrote"),
      );
      await session.prompt("write").result;
      const points = await session.rewindPoints();
      assert.deepEqual(
        points.map((p) => p.files.map((f) => f.path)),
        [[], ["small.txt"]],
      );
      const second = points[1];
      assert.ok(second);
      const result = await session.rewind({ seq: second.seq, scope: "files" });
      assert.deepEqual(result.restored, ["small.txt"]);
      assert.equal(await readFile(path.join(ws, "big.txt"), "utf8"), big, "over the cap: never restored");
      assert.equal(await readFile(path.join(ws, "ignored.log"), "utf8"), "log\n", ".gitignore honoured");
      assert.equal(session.history.length, 10, "files only: the conversation is whole");
    });

    test("a file the user changed between two agent turns that both touched it is listed and left alone unless overwrite", async () => {
      const session = await crow.newSession({ cwd: ws });
      const shared = path.join(ws, "between.txt");
      const untouched = path.join(ws, "untouched.txt");
      await writeFile(shared, "original\n");
      await writeFile(untouched, "original\n");
      mock.script(
        reply().toolCall("put", { path: shared, text: "agent 1\n" }),
        textReply("one"),
        reply().toolCall("put", { path: shared, text: "agent 2\n" }),
        textReply("two"),
      );
      await session.prompt("first").result;
      await writeFile(shared, "the user's edit\n");
      await writeFile(untouched, "the user's edit\n");
      await session.prompt("second").result;
      const [first] = await session.rewindPoints();
      assert.ok(first);

      const kept = await session.rewind({ seq: first.seq, scope: "files" });
      assert.deepEqual([kept.restored, kept.conflicts], [[], ["between.txt"]]);
      assert.match(kept.message, /Left alone, changed since by someone other than the agent: between\.txt/);
      assert.equal(await readFile(shared, "utf8"), "agent 2\n", "not overwritten silently");
      assert.equal(await readFile(untouched, "utf8"), "the user's edit\n", "never the agent's: not touched");

      const forced = await session.rewind({ seq: first.seq, scope: "files", overwrite: true });
      assert.deepEqual([forced.restored, forced.conflicts], [["between.txt"], []]);
      assert.equal(await readFile(shared, "utf8"), "original\n", "back to its bytes before turn 1");
      assert.equal(await readFile(untouched, "utf8"), "the user's edit\n", "still not touched");
    });

    test("a turn that never ended (no snapshot after) does not hide a user's edit made after it", async () => {
      const session = await crow.newSession({ cwd: ws });
      const shared = path.join(ws, "crashed.txt");
      await writeFile(shared, "original\n");
      mock.script(reply().toolCall("put", { path: shared, text: "agent 1\n" }), textReply("one"));
      await session.prompt("first").result;
      // As a process that died in the middle of turn 1 leaves its row: a snapshot before, nothing after.
      const db = (crow.store as unknown as { db: Kysely<unknown> }).db;
      await sql`update checkpoints set after_commit = null, files = null where session_id = ${session.id}`.execute(db);
      await writeFile(shared, "the user's edit\n");
      mock.script(reply().toolCall("put", { path: shared, text: "agent 2\n" }), textReply("two"));
      await session.prompt("second").result;
      const [first] = await session.rewindPoints();
      assert.ok(first);
      const kept = await session.rewind({ seq: first.seq, scope: "files" });
      assert.deepEqual([kept.restored, kept.conflicts], [[], ["crashed.txt"]]);
      assert.equal(await readFile(shared, "utf8"), "agent 2\n", "asked about, not overwritten silently");
    });

    test("the user's GIT_DIR does not leak into the shadow repository; the user's .git is untouched", async () => {
      const userGit = path.join(ws, ".git");
      const head = () => execFileSync("git", ["--git-dir", userGit, "count-objects"], { encoding: "utf8" });
      const objectsBefore = head();
      const saved = { dir: process.env.GIT_DIR, index: process.env.GIT_INDEX_FILE };
      process.env.GIT_DIR = userGit;
      process.env.GIT_INDEX_FILE = path.join(userGit, "index");
      try {
        const session = await crow.newSession({ cwd: ws });
        mock.script(reply().toolCall("put", { path: path.join(ws, "leak.txt"), text: "1\n" }), textReply("ok"));
        await session.prompt("write").result;
        assert.equal((await session.rewindPoints())[0]?.files[0]?.path, "leak.txt");
      } finally {
        if (saved.dir === undefined) delete process.env.GIT_DIR;
        else process.env.GIT_DIR = saved.dir;
        if (saved.index === undefined) delete process.env.GIT_INDEX_FILE;
        else process.env.GIT_INDEX_FILE = saved.index;
      }
      assert.equal(head(), objectsBefore, "no object was written to the user's repository");
      assert.equal(existsSync(path.join(userGit, "index")), false, "the user's index was not written");
      const shadow = shadowGitDir(dir, ws);
      const listed = execFileSync("git", ["--git-dir", shadow, "ls-tree", "-r", "--name-only", "main"], {
        encoding: "utf8",
      });
      assert.ok(listed.includes("leak.txt") && !listed.includes(".git/"), listed);
    });

    test("a file rewind of checkpoints taken on another host is refused clearly; the conversation part still works", async () => {
      const session = await crow.newSession({ cwd: ws });
      mock.script(reply().toolCall("put", { path: path.join(ws, "far.txt"), text: "far\n" }), textReply("ok"));
      await session.prompt("write far").result;
      const db = (crow.store as unknown as { db: Kysely<unknown> }).db;
      const [first] = await session.rewindPoints();
      assert.ok(first);
      await sql`update checkpoints set workspace = '/no/such/workspace' where session_id = ${session.id}`.execute(db);
      const moved = await session.rewind({ seq: first.seq, scope: "files", dryRun: true });
      assert.match(moved.filesRefused ?? "", /\/no\/such\/workspace, is no longer there/);
      await sql`update checkpoints set workspace = ${ws}, host = 'elsewhere' where session_id = ${session.id}`.execute(
        db,
      );
      const result = await session.rewind({ seq: first.seq });
      assert.match(result.filesRefused ?? "", /taken on host "elsewhere".*on that machine only/);
      assert.match(result.message, /Files not restored/);
      assert.equal(await readFile(path.join(ws, "far.txt"), "utf8"), "far\n");
      assert.equal(session.history.length, 0, "the conversation was rewound");
    });

    test("garbage collection drops old checkpoints and the snapshots only they kept", async () => {
      const store = crow.store;
      assert.ok(store);
      // A checkpoint of its own (whatever the tests before left): a turn that changes a file.
      const session = await crow.newSession({ cwd: ws });
      mock.script(reply().toolCall("put", { path: path.join(ws, "gc.txt"), text: "gc\n" }), textReply("ok"));
      await session.prompt("write gc").result;
      const own = () => store.checkpoints.list(session.id);
      assert.ok((await own()).length > 0, "the turn took a checkpoint");
      const shadow = shadowGitDir(dir, ws);
      const refs = () =>
        execFileSync("git", ["--git-dir", shadow, "for-each-ref", "refs/crow/"], { encoding: "utf8" }).trim();
      assert.notEqual(refs(), "", "its snapshot is kept by a ref");
      const kept = await collectCheckpoints(store, dir, hostname(), 30);
      assert.equal(kept.rowsDeleted, 0);
      assert.ok((await own()).length > 0, "younger than 30 days: kept");
      const young = await collectCheckpoints(store, dir, hostname(), -1);
      assert.equal(
        young.refsDropped,
        0,
        "snapshots younger than an hour are kept (another process may be storing one)",
      );
      const report = await collectCheckpoints(store, dir, hostname(), -1, 0);
      assert.ok(young.rowsDeleted > 0 && report.refsDropped > 0, JSON.stringify([young, report]));
      assert.deepEqual(await own(), [], "its checkpoint rows are gone");
      assert.equal(refs(), "", "and so are the snapshots only they kept");
    });
  });
}

behaves("SQLite", async (dir) => `sqlite:///${dir}/crow.db`);

let pg: PostgresServer | undefined;
after(async () => pg?.stop());
behaves("PostgreSQL", async () => {
  if (!findPostgresBin()) throw new Error("PostgreSQL 15 binaries are not installed (apt-get install -y postgresql)");
  pg = await startPostgres();
  return pg.createDatabase();
});

test("a checkpoint that cannot be taken never stops the tool; the warning is said once per session", async () => {
  const mock = await startMockLlm();
  const dir = await mkdtemp(path.join(tmpdir(), "crow-cp-fail-"));
  const notAHome = path.join(dir, "a-file");
  await writeFile(notAHome, "not a directory");
  const crow = await createRuntime({
    llm: createLlmClient({ baseURL: mock.url, retry: { maxRetries: 0 } }),
    model: "mock-model",
    store: `sqlite:///${dir}/crow.db`,
    home: notAHome,
    systemPrompt: "test",
    logger: quiet,
    extensions: [fileTools],
  });
  try {
    const session = await crow.newSession({ cwd: dir });
    const notices: string[] = [];
    session.subscribe((event) => {
      if (event.type === "notice") notices.push(event.message);
    });
    mock.script(
      reply().toolCall("put", { path: path.join(dir, "one.txt"), text: "1" }),
      textReply("ok"),
      reply().toolCall("put", { path: path.join(dir, "two.txt"), text: "2" }),
      textReply("ok"),
    );
    await session.prompt("one").result;
    await session.prompt("two").result;
    assert.equal(await readFile(path.join(dir, "two.txt"), "utf8"), "2", "the tools ran");
    assert.equal(notices.length, 1, notices.join("\n"));
    assert.match(notices[0] ?? "", /No workspace checkpoint/);
  } finally {
    await crow.close();
    await mock.close();
    await rm(dir, { recursive: true, force: true });
  }
});
