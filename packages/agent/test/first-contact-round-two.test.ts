/**
 * The frictions a new user met on a second first contact (issue #31), each as the user meets it: the built `crow`
 * in a private HOME against the mock LLM.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { openStore } from "@crow/core";
import { AmbiguousSessionIdError, resolveSessionId } from "@crow/core/internal";
import { type CapturedRequest, CROW_BIN, startAcpFixture, textReply } from "@crow/testkit";
import { runCrow, useRunFixture } from "./run-helpers.js";

const README = path.resolve(fileURLToPath(import.meta.url), "../../../../README.md");
/** The command line's page, which the README's tour links: usage, options, JSON events, exit codes. */
const CLI_DOC = path.resolve(fileURLToPath(import.meta.url), "../../../../docs/cli.md");

describe("first contact, round two", { timeout: 180_000 }, () => {
  const fx = useRunFixture();

  test("OPENAI_BASE_URL alone: the endpoint's only model is used, with a one-line notice", async () => {
    fx.mock.script(textReply("Hello.").expect((req) => assert.equal(req.body.model, "mock-model")));
    const run = await runCrow(["-c", fx.ws.dir, "hi"], { env: { ...fx.env, CROW_MODEL: "" } });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, "Hello.\n");
    assert.match(run.stderr, /model "mock-model": the only model at http:\/\/127\.0\.0\.1:\d+\/v1 \(set CROW_MODEL/);
    fx.mock.assertDone();
  });

  test("crow acp, OPENAI_BASE_URL alone: the endpoint's only model too, said once on stderr", async () => {
    const fx = await startAcpFixture({ agent: { env: { CROW_MODEL: "" } } });
    try {
      const { sessionId } = await fx.agent.newSession(fx.ws.dir);
      fx.mock.script(textReply("Hi from the only model.").expect((req) => assert.equal(req.body.model, "mock-model")));
      assert.equal((await fx.agent.prompt(sessionId, "hi")).stopReason, "end_turn");
      assert.match(fx.agent.stderr(), /crow: model "mock-model": the only model at http:\/\/127\.0\.0\.1:\d+\/v1/);
      fx.mock.assertDone();
    } finally {
      await fx.close();
    }
  });

  test("a unique beginning of a session id continues it; one that names nothing is exit 2", async () => {
    fx.mock.script(textReply("Noted."), textReply("Still here."));
    const first = await runCrow(["-c", fx.ws.dir, "remember 42"], { env: fx.env });
    assert.equal(first.code, 0, first.stderr);
    const id = /Continue with: crow run -s (\S+)/.exec(first.stderr)?.[1];
    assert.ok(id, first.stderr);
    // Two words of the three-word slug and its random tail: unique among this store's sessions.
    const prefix = id.slice(0, id.lastIndexOf("-") + 3);
    const next = await runCrow(["-c", fx.ws.dir, "-s", prefix, "--json", "and now?"], { env: fx.env });
    assert.equal(next.code, 0, next.stderr);
    const opened = JSON.parse(next.stdout.split("\n")[0] ?? "{}") as { sessionId?: string; loaded?: boolean };
    assert.deepEqual(opened, { type: "session", sessionId: id, loaded: true, modeId: "code" });
    fx.mock.assertDone();

    const shown = spawnSync(process.execPath, [CROW_BIN, "sessions", "show", prefix], {
      env: fx.env,
      encoding: "utf8",
    });
    assert.equal(shown.status, 0, shown.stderr);
    assert.match(shown.stdout, /remember 42/);
    const unknown = spawnSync(process.execPath, [CROW_BIN, "sessions", "show", "zzz-no-such"], {
      env: fx.env,
      encoding: "utf8",
    });
    assert.equal(unknown.status, 2, "an unknown id exits 2 in crow sessions as in crow run -s");
  });

  test("an ambiguous beginning lists the candidates", async () => {
    const store = await openStore(":memory:");
    try {
      for (const id of ["drunk-tomato-aaaa11", "drunk-tomato-bbbb22", "calm-river-cccc33"]) {
        await store.createSession({ id, cwd: "/tmp" });
      }
      assert.equal(await resolveSessionId(store, "drunk-tomato-a"), "drunk-tomato-aaaa11");
      assert.equal(await resolveSessionId(store, "calm-river-cccc33"), "calm-river-cccc33");
      assert.equal(await resolveSessionId(store, "nothing"), undefined);
      await assert.rejects(
        resolveSessionId(store, "drunk-tomato"),
        (error: unknown) =>
          error instanceof AmbiguousSessionIdError &&
          /"drunk-tomato" starts several session ids: drunk-tomato-(aaaa11|bbbb22), drunk-tomato-(aaaa11|bbbb22) \(give more of the id\)/.test(
            error.message,
          ),
      );
    } finally {
      await store.close();
    }
  });

  test("a Crow home that cannot be written: exit 2 naming CROW_HOME and CROW_DB_URI", async () => {
    // A home below a regular file: not writable even for root.
    const blocker = path.join(fx.home.dir, "a-file");
    await writeFile(blocker, "");
    const blocked = { ...fx.env, CROW_HOME: path.join(blocker, ".crow") };
    const run = await runCrow(["-c", fx.ws.dir, "hi"], { env: blocked });
    assert.equal(run.code, 2, run.stderr);
    assert.match(
      run.stderr,
      /cannot open the SQLite database .*Set CROW_HOME to a directory Crow can write.*CROW_DB_URI/,
    );
    const sessions = spawnSync(process.execPath, [CROW_BIN, "sessions", "list"], { env: blocked, encoding: "utf8" });
    assert.equal(sessions.status, 2, sessions.stderr);
    assert.match(sessions.stderr, /CROW_HOME .*CROW_DB_URI/);
  });

  describe("--thought LEVEL, with levels configured for the model that OPENAI_BASE_URL serves", () => {
    let thoughtEnv: Record<string, string>;
    before(async () => {
      const dir = path.join(fx.home.dir, "thinking");
      await mkdir(dir, { recursive: true });
      await writeFile(
        path.join(dir, "config.yaml"),
        [
          "providers:",
          "  local: { base_url: 'http://127.0.0.1:9/v1' }",
          "models:",
          "  mock-model: { provider: local, reasoning_effort: [low, default, high] }",
          "default_model: mock-model",
        ].join("\n"),
      );
      thoughtEnv = { ...fx.env, CROW_HOME: dir };
    });
    const effortIs = (effort: string) => (req: CapturedRequest) => assert.equal(req.body.reasoning_effort, effort);

    test("a configured level is sent, including one literally named default", async () => {
      fx.mock.script(textReply("Thought hard.").expect(effortIs("high")));
      const high = await runCrow(["-c", fx.ws.dir, "--thought", "high", "think"], { env: thoughtEnv });
      assert.equal(high.code, 0, high.stderr);
      fx.mock.script(textReply("Thought by default.").expect(effortIs("default")));
      const named = await runCrow(["-c", fx.ws.dir, "--thought", "default", "think"], { env: thoughtEnv });
      assert.equal(named.code, 0, named.stderr);
      fx.mock.assertDone();
    });

    test("an unknown level: exit 2 with the available ones", async () => {
      const run = await runCrow(["-c", fx.ws.dir, "--thought", "extreme", "think"], { env: thoughtEnv });
      assert.equal(run.code, 2, run.stderr);
      assert.match(run.stderr, /unknown thought level "extreme" \(available: provider-default, low, default, high\)/);
    });
  });

  test("crow --help and crow run --help say what the docs say: commands (README), options, JSON events, exit codes (docs/cli.md)", async () => {
    const readme = await readFile(README, "utf8");
    const cliDoc = await readFile(CLI_DOC, "utf8");
    const help = spawnSync(process.execPath, [CROW_BIN, "--help"], { encoding: "utf8" }).stdout;
    const runHelp = spawnSync(process.execPath, [CROW_BIN, "run", "--help"], { encoding: "utf8" }).stdout;
    const table = help.slice(help.indexOf("Exit codes (every command):")).trimEnd();
    assert.ok(table.startsWith("Exit codes"), help);
    assert.ok(cliDoc.includes(table), `docs/cli.md has the exit code table of crow --help:\n${table}`);
    assert.ok(runHelp.trimEnd().endsWith(table), "crow run --help prints the same table");
    for (const command of help.matchAll(/^ {2}crow (\w+)/gm)) {
      assert.match(readme, new RegExp(`crow ${command[1]}\\b`), `README mentions crow ${command[1]}`);
    }
    assert.match(help, /crow sessions\s+list, show, export, delete, fork or serve/);
    assert.match(readme, /crow sessions list\|show\|export\|delete\|fork\|serve/);
    assert.match(cliDoc, /crow sessions list\|show\|export\|delete\|fork\|serve/);
    for (const command of help.matchAll(/^ {2}crow (\w+)/gm)) {
      assert.match(cliDoc, new RegExp(`^crow ${command[1]}\\b`, "m"), `docs/cli.md's usage lists crow ${command[1]}`);
    }
    for (const option of runHelp.matchAll(/^ {2}(?:-\w, )?\s*(--[\w-]+)/gm)) {
      if (option[1] === "--help") continue;
      assert.ok(cliDoc.includes(option[1] as string), `docs/cli.md's crow run lists ${option[1]}`);
    }
    const events = (text: string) =>
      /one JSON event per line on stdout \(([^)]*)\)/.exec(text)?.[1]?.replace(/\s+/g, " ");
    assert.equal(events(cliDoc), events(runHelp));
    assert.match(events(runHelp) ?? "", /\bnotice\b/);
    // Every event a real --json run prints is one the list names (it had left out "prompt").
    fx.mock.script(textReply("Hello."));
    const run = await runCrow(["-c", fx.ws.dir, "--json", "hi"], { env: fx.env });
    assert.equal(run.code, 0, run.stderr);
    const documented = new Set((events(cliDoc) ?? "").split(", "));
    const printed = new Set(
      run.stdout
        .trim()
        .split("\n")
        .map((line) => (JSON.parse(line) as { type: string }).type),
    );
    assert.deepEqual(
      [...printed].filter((type) => !documented.has(type)),
      [],
      `events printed: ${[...printed].join(", ")}`,
    );
    assert.ok(printed.has("prompt") && printed.has("stop"), [...printed].join(", "));
  });
});
