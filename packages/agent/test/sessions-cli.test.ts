import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { after, before, describe, test } from "node:test";
import { openStore, type Store } from "@crow/core";
import { CROW_BIN, findPostgresBin, type PostgresServer, startPostgres, tempWorkspace } from "@crow/testkit";
import { spawn as spawnPty } from "@lydell/node-pty";

/** This process's environment without Crow's and the provider's variables. */
function cleanEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.startsWith("CROW_") && !key.startsWith("OPENAI_")) env[key] = value;
  }
  return env;
}

/** Runs the built `crow sessions …` with CROW_HOME set, no config but what the test wrote. */
function crowSessions(home: string, args: string[]) {
  const env = cleanEnv();
  const run = spawnSync(process.execPath, [CROW_BIN, "sessions", ...args], {
    encoding: "utf8",
    env: { ...env, CROW_HOME: home },
  });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

/** Two sessions: one with a tool round trip, one plain; returns their ids. */
async function populate(store: Store, cwd: string): Promise<{ task: string; chat: string }> {
  const task = await store.createSession({ cwd, title: "Fix the failing test", model: "fast", mode: "code" });
  await store.appendMessages(task.id, [
    { message: { role: "user", content: "Fix the failing test in math.py" } },
    {
      message: {
        role: "assistant",
        content: "Let me look.",
        reasoning_content: "The test probably checks add().",
        tool_calls: [
          { id: "call_1", type: "function", function: { name: "read", arguments: '{"file_path":"/w/math.py"}' } },
        ],
      },
      usage: { promptTokens: 100, completionTokens: 20, totalTokens: 120, cachedTokens: 60 },
    },
    {
      message: {
        role: "tool",
        tool_call_id: "call_1",
        content: `1→def add(a, b):\n2→    return a - b\n${"x".repeat(5000)}`,
      },
    },
    { message: { role: "assistant", content: "Fixed: add() subtracted." } },
  ]);
  const chat = await store.createSession({ cwd: `${cwd}/other`, title: "Explain closures" });
  await store.appendMessages(chat.id, [
    { message: { role: "user", content: "What is a closure?" } },
    { message: { role: "assistant", content: "A function with its environment." } },
  ]);
  return { task: task.id, chat: chat.id };
}

function behaves(kind: string, setup: () => Promise<{ home: string; store: Store; cleanup: () => Promise<void> }>) {
  describe(`crow sessions on ${kind}`, () => {
    let home: string;
    let store: Store;
    let cleanup: () => Promise<void>;
    let ids: { task: string; chat: string };
    before(async () => {
      ({ home, store, cleanup } = await setup());
      ids = await populate(store, "/w");
    });
    after(async () => {
      await store.close();
      await cleanup();
    });

    test("list shows ids, titles and cwds, newest first, and filters by cwd", () => {
      const all = crowSessions(home, ["list"]);
      assert.equal(all.code, 0, all.stderr);
      const lines = all.stdout.trim().split("\n");
      assert.equal(lines.length, 2);
      assert.ok(lines[0]?.startsWith(ids.chat), all.stdout);
      assert.match(all.stdout, new RegExp(`${ids.task} .*Fix the failing test.*/w\\n`));
      // Tokens per task and the share of the prompt the provider had cached; nothing for a session without usage.
      assert.match(all.stdout, new RegExp(`${ids.task} .*Fix the failing test +120 tokens/task, 60% cached +/w\\n`));
      assert.match(all.stdout, new RegExp(`${ids.chat} .*Explain closures +/w/other\\n`));
      const filtered = crowSessions(home, ["list", "--cwd", "/w", "--json"]);
      assert.deepEqual(
        (JSON.parse(filtered.stdout) as Array<{ id: string }>).map((s) => s.id),
        [ids.task],
      );
      assert.deepEqual((JSON.parse(filtered.stdout) as Array<{ usage: unknown }>)[0]?.usage, {
        prompts: 1,
        requests: 1,
        promptTokens: 100,
        completionTokens: 20,
        cachedTokens: 60,
      });
    });

    test("show prints the transcript with tool calls and shortened results", () => {
      const shown = crowSessions(home, ["show", ids.task]);
      assert.equal(shown.code, 0, shown.stderr);
      assert.match(shown.stdout, /^# Fix the failing test\n/);
      assert.match(shown.stdout, /- model: fast/);
      assert.match(shown.stdout, /## User\n\nFix the failing test in math\.py/);
      assert.match(shown.stdout, /> The test probably checks add\(\)\./);
      assert.match(
        shown.stdout,
        /\*\*Tool call\*\* `read` \(call_1\)\n\n```json\n\{\n {2}"file_path": "\/w\/math\.py"\n\}/,
      );
      assert.match(shown.stdout, /2→ {4}return a - b/);
      assert.match(shown.stdout, /more characters; use 'crow sessions export' for everything/);
      assert.match(shown.stdout, /Fixed: add\(\) subtracted\./);
    });

    test("export writes the full session as Markdown or JSON", async () => {
      const ws = await tempWorkspace();
      try {
        const md = crowSessions(home, ["export", ids.task, "-o", ws.path("t.md")]);
        assert.equal(md.code, 0, md.stderr);
        const text = readFileSync(ws.path("t.md"), "utf8");
        assert.ok(text.includes("x".repeat(5000)), "export keeps whole tool results");
        const json = crowSessions(home, ["export", ids.task, "--format", "json"]);
        const parsed = JSON.parse(json.stdout) as {
          session: { id: string };
          messages: Array<{ message: { role: string } }>;
        };
        assert.equal(parsed.session.id, ids.task);
        assert.deepEqual(
          parsed.messages.map((m) => m.message.role),
          ["user", "assistant", "tool", "assistant"],
        );
      } finally {
        await ws.cleanup();
      }
    });

    test("unknown ids and bad usage are explained", () => {
      const missing = crowSessions(home, ["show", "no-such-session"]);
      assert.equal(missing.code, 2, "an unknown id is a usage error, as for crow run -s");
      assert.match(missing.stderr, /no session no-such-session in .*'crow sessions list' shows the ids/);
      const usage = crowSessions(home, ["frobnicate"]);
      assert.equal(usage.code, 2);
      assert.match(usage.stderr, /unknown command "frobnicate"/);
      const format = crowSessions(home, ["export", ids.task, "--format", "pdf"]);
      assert.equal(format.code, 2);
      assert.match(format.stderr, /--format must be md or json, got "pdf"/);
    });

    test("delete without a terminal requires --yes; with it, removes a session and its history", async () => {
      // Sessions of its own: the others' (list, show, export) stay whatever order the tests run in.
      const own = await populate(store, "/deleted");
      try {
        const refused = crowSessions(home, ["delete", own.chat]);
        assert.equal(refused.code, 2);
        assert.match(refused.stderr, /asks for confirmation in a terminal; without one, pass --yes/);
        assert.ok(await store.getSession(own.chat), "still there");
        const deleted = crowSessions(home, ["delete", "--yes", own.chat]);
        assert.equal(deleted.code, 0, deleted.stderr);
        assert.equal(deleted.stdout, `deleted ${own.chat}\n`);
        assert.equal(await store.getSession(own.chat), undefined);
        assert.equal((await store.loadMessages(own.chat)).length, 0);
        const again = crowSessions(home, ["delete", "-y", own.chat]);
        assert.equal(again.code, 2);
      } finally {
        for (const id of [own.task, own.chat]) await store.deleteSession(id);
      }
    });

    test("delete in a terminal asks: n keeps the session, y deletes it", async () => {
      const own = await populate(store, "/asked");
      const answer = async (key: string) => {
        const pty = spawnPty(process.execPath, [CROW_BIN, "sessions", "delete", own.task], {
          cols: 120,
          rows: 20,
          env: { ...cleanEnv(), CROW_HOME: home },
        });
        let output = "";
        let asked = false;
        pty.onData((data) => {
          output += data;
          if (output.includes("[y/N]") && !asked) {
            asked = true;
            pty.write(`${key}\r`);
          }
        });
        const code = await new Promise<number>((resolve) => pty.onExit(({ exitCode }) => resolve(exitCode)));
        return { code, output };
      };
      try {
        const kept = await answer("n");
        assert.match(kept.output, new RegExp(`Delete session ${own.task} with its history\\? \\[y/N\\]`));
        assert.equal(kept.code, 1);
        assert.ok(await store.getSession(own.task), "kept");
        const gone = await answer("y");
        assert.equal(gone.code, 0, gone.output);
        assert.equal(await store.getSession(own.task), undefined);
      } finally {
        for (const id of [own.task, own.chat]) await store.deleteSession(id);
      }
    });

    test("list and show draw no control sequences from the model's title or text; export keeps them", async () => {
      const hostile = await store.createSession({ cwd: "/h", title: "Title\x1b]0;PWNED\x07 here\x1b[2J" });
      await store.appendMessages(hostile.id, [
        { message: { role: "user", content: "hi" } },
        { message: { role: "assistant", content: "Answer\x1b]52;c;UFdO\x07 \x9b2Jdone" } },
      ]);
      // biome-ignore lint/suspicious/noControlCharactersInRegex: the test looks for escape sequences
      const leaked = /\x1b|\x9b|PWNED|UFdO/;
      try {
        const listed = crowSessions(home, ["list", "--cwd", "/h"]);
        assert.doesNotMatch(listed.stdout, leaked, JSON.stringify(listed.stdout));
        assert.match(listed.stdout, /Title here/);
        const shown = crowSessions(home, ["show", hostile.id]);
        assert.doesNotMatch(shown.stdout, leaked, JSON.stringify(shown.stdout));
        assert.match(shown.stdout, /Answer done/);
        const exported = crowSessions(home, ["export", hostile.id, "--format", "json"]);
        assert.ok(exported.stdout.includes("\\u001b]52;c;UFdO"), "export is the data as stored");
      } finally {
        // The list test counts the sessions: leave only the shared two.
        await store.deleteSession(hostile.id);
      }
    });
  });
}

behaves("SQLite (the default store in CROW_HOME)", async () => {
  const ws = await tempWorkspace();
  const store = await openStore(ws.path("crow.db"));
  return { home: ws.dir, store, cleanup: () => ws.cleanup() };
});

let pg: PostgresServer | undefined;
behaves("PostgreSQL (db_uri in config.yaml)", async () => {
  if (!findPostgresBin()) throw new Error("PostgreSQL 15 binaries are not installed (apt-get install -y postgresql)");
  pg = await startPostgres();
  const ws = await tempWorkspace();
  writeFileSync(ws.path("config.yaml"), `db_uri: ${pg.url}\n`);
  const store = await openStore(pg.url);
  return {
    home: ws.dir,
    store,
    cleanup: async () => {
      await ws.cleanup();
      await pg?.stop();
    },
  };
});
