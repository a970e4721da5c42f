/**
 * What a new user met on a third first contact (issue #37), each as the user meets it: the built `crow` in a
 * private HOME against the mock LLM.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { describe, test } from "node:test";
import { openStore } from "@crow/core";
import { CROW_BIN, closedPort, reply, startAcpFixture, startMockLlm, textReply } from "@crow/testkit";
import { runCrow, runEnv, runProcess, tempHome, useRunFixture } from "./run-helpers.js";

describe("first contact, round three", { timeout: 180_000 }, () => {
  const fx = useRunFixture();

  test("OPENAI_BASE_URL alone: crow run --model <the endpoint's only model> runs", async () => {
    fx.mock.script(textReply("Hello.").expect((req) => assert.equal(req.body.model, "mock-model")));
    const run = await runCrow(["-c", fx.ws.dir, "--model", "mock-model", "hi"], { env: { ...fx.env, CROW_MODEL: "" } });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, "Hello.\n");
    fx.mock.assertDone();
  });

  test("OPENAI_BASE_URL alone, nothing listening: 'Cannot reach' the URL and what to do, not 'No model configured'", async () => {
    const url = `http://127.0.0.1:${await closedPort()}/v1`;
    const run = await runCrow(["-c", fx.ws.dir, "hi"], { env: { ...fx.env, CROW_MODEL: "", OPENAI_BASE_URL: url } });
    assert.equal(run.code, 2);
    assert.match(
      run.stderr,
      new RegExp(
        `^crow: Cannot reach ${url.replace(/[./]/g, "\\$&")}/models: ECONNREFUSED \\(asked which model to use, as ` +
          "CROW_MODEL is not set\\): start the server or correct OPENAI_BASE_URL, or set CROW_MODEL\\.",
      ),
    );
    assert.doesNotMatch(run.stderr, /No model configured/);
  });

  test("OPENAI_BASE_URL alone, an endpoint with two models: both named, and how to choose", async () => {
    const two = await startMockLlm({ models: ["alpha-7b", "beta-13b"] });
    try {
      const run = await runCrow(["-c", fx.ws.dir, "hi"], {
        env: { ...fx.env, CROW_MODEL: "", OPENAI_BASE_URL: two.url },
      });
      assert.equal(run.code, 2);
      assert.match(
        run.stderr,
        /^crow: No model chosen: http:\/\/127\.0\.0\.1:\d+\/v1 offers 2 models \(alpha-7b, beta-13b\); set CROW_MODEL to one of them, or pass --model\./,
      );
      two.script(textReply("Beta here.").expect((req) => assert.equal(req.body.model, "beta-13b")));
      const chosen = await runCrow(["-c", fx.ws.dir, "--model", "beta-13b", "hi"], {
        env: { ...fx.env, CROW_MODEL: "", OPENAI_BASE_URL: two.url },
      });
      assert.equal(chosen.code, 0, chosen.stderr);
      assert.equal(chosen.stdout, "Beta here.\n");
      two.assertDone();
    } finally {
      await two.close();
    }
  });

  test("crow sessions list --all --json into a pipe read slowly: every byte arrives", async () => {
    const store = await openStore(path.join(fx.home.dir, "crow.db"));
    try {
      for (let i = 0; i < 400; i++)
        await store.createSession({ cwd: fx.ws.dir, title: `Session ${i} ${"t".repeat(200)}` });
    } finally {
      await store.close();
    }
    // A shell pipe (what an editor's or a user's pipeline is), whose reader starts late: crow has written all it
    // will before anything is read. Whatever the timing, the output is whole; the old crow lost all but 64 KB.
    const script = '"$0" "$1" sessions list --all --json | { sleep 1; cat; }';
    for (let run = 0; run < 3; run++) {
      const piped = spawnSync("sh", ["-c", script, process.execPath, CROW_BIN], { env: fx.env, encoding: "utf8" });
      assert.equal(piped.status, 0, piped.stderr);
      assert.ok(piped.stdout.length > 64 * 1024, `only ${piped.stdout.length} bytes`);
      const listed = JSON.parse(piped.stdout) as unknown[];
      assert.ok(listed.length >= 400, `${listed.length} sessions`);
    }
  });

  test("after crow logout, crow doctor and crow run say signed out and how to sign in again", async () => {
    const home = await tempHome();
    try {
      const env = runEnv(fx.mock.url, home.dir, { OPENAI_BASE_URL: undefined, CROW_MODEL: undefined });
      const crow = (...args: string[]) => runProcess(process.execPath, [CROW_BIN, ...args], { env, cwd: fx.ws.dir });
      const init = await crow(
        "init",
        `--provider=acme=${fx.mock.url}`,
        "--api-key=sk-test-123456",
        "--model=mock-model",
      );
      assert.equal(init.code, 0, init.stderr);
      assert.equal((await crow("logout")).code, 0);
      const signedOut =
        /Provider "acme" has no API key: ACME_API_KEY is empty, so Crow is signed out \(crow logout removes the key\); run crow init to save it again\./;

      const doctor = await crow("doctor");
      assert.match(doctor.stdout, new RegExp(`✗ ${signedOut.source}\n    → crow init\n`));
      assert.doesNotMatch(doctor.stdout, /✓ provider "acme": .*no key/);

      const run = await runCrow(["-c", fx.ws.dir, "hi"], { env });
      assert.equal(run.code, 2);
      assert.match(run.stderr, new RegExp(`^crow: ${signedOut.source}`));
      assert.doesNotMatch(run.stderr, /add api_key under providers/);
    } finally {
      await home.cleanup();
    }
  });

  test("crow acp, models from the environment: the picker describes each by its URL, not as '(default)'", async () => {
    const acp = await startAcpFixture({ agent: { env: { CROW_MODELS: "mock-model,other-model" } } });
    try {
      const { configOptions } = await acp.agent.newSession(acp.ws.dir);
      const model = configOptions?.find((o) => o.id === "model");
      assert.ok(model && model.type === "select", JSON.stringify(configOptions));
      const described = model.options.map((o) => ("description" in o ? o.description : undefined));
      assert.deepEqual(
        described.map((d) => d?.replace(/:\d+/, ":PORT")),
        ["mock-model at http://127.0.0.1:PORT/v1", "other-model at http://127.0.0.1:PORT/v1"],
      );
    } finally {
      await acp.close();
    }
  });

  test("--mode ask without a terminal: says why the tools were refused and exits 1", async () => {
    const file = fx.ws.path("refused.txt");
    fx.mock.script(reply().toolCall("write", { file_path: file, content: "x\n" }), textReply("Could not write it."));
    const run = await runCrow(["-c", fx.ws.dir, "--mode", "ask", "write refused.txt"], { env: fx.env });
    assert.equal(run.code, 1, run.stderr);
    assert.match(
      run.stderr,
      /\ncrow: 1 tool call was refused: permission was needed and, with no terminal, nobody could be asked\. Run crow in a terminal to answer, or allow such calls with --yes \(or --mode code\)\.\n/,
    );
    assert.equal(existsSync(file), false);
    fx.mock.assertDone();
  });

  test("argument errors come first: no GET /models notice (nor any network) before them", async () => {
    const url = `http://127.0.0.1:${await closedPort()}/v1`;
    const empty = await runCrow(["-c", fx.ws.dir], { env: { ...fx.env, CROW_MODEL: "", OPENAI_BASE_URL: url } });
    assert.equal(empty.code, 2);
    assert.equal(empty.stderr, "crow: the prompt on stdin is empty\nRun 'crow run --help' for usage.\n");
    const thought = await runCrow(["-c", fx.ws.dir, "--thought", "high", "hi"], { env: { ...fx.env, CROW_MODEL: "" } });
    assert.equal(thought.code, 2);
    assert.match(thought.stderr, /^crow: --thought high: the model has no thought levels/);
    assert.doesNotMatch(thought.stderr, /the only model/);
  });

  test("crow --help names CROW_HOME, CROW_DB_URI, SEARXNG_URL and crow-mcp; crow run --help says -s takes a beginning", async () => {
    const help = await runProcess(process.execPath, [CROW_BIN, "--help"], { env: fx.env });
    for (const name of ["CROW_HOME", "CROW_DB_URI", "SEARXNG_URL", "crow-mcp"])
      assert.match(help.stdout, new RegExp(`\\n  ${name} `));
    const acp = await runProcess(process.execPath, [CROW_BIN, "acp", "--help"], { env: fx.env });
    assert.equal(acp.code, 0);
    assert.match(acp.stdout, /^Usage: crow acp\n\nRuns the agent over ACP/);
    const run = await runProcess(process.execPath, [CROW_BIN, "run", "--help"], { env: fx.env });
    assert.match(run.stdout, /-s, --session ID +continue a saved session \(its id, or any unique beginning of it\)/);
  });
});
