/**
 * The errors a new user meets first, as `crow run` and an editor (over ACP) show them: a server that is not there, a
 * rejected key, an unknown model, a certificate Node does not trust. Each names what failed and what to try, never
 * the key; a run whose first turn never reached the model leaves no session behind.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { createServer as createHttpsServer, type Server as HttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import {
  CROW_BIN,
  closedPort,
  httpError,
  type MockLlm,
  spawnAcpAgent,
  startMockLlm,
  type TempWorkspace,
  tempWorkspace,
  textReply,
} from "@crow/testkit";
import { type RunResult, runCrow, runEnv, tempHome } from "./run-helpers.js";

const KEY = "sk-test-secret-0123456789";

interface RpcError {
  code?: number;
  message?: string;
}

describe("first contact: errors that say what failed and what to try", { timeout: 400_000 }, () => {
  let mock: MockLlm;
  let ws: TempWorkspace;
  let home: { dir: string; cleanup: () => Promise<void> };
  let env: Record<string, string>;

  before(async () => {
    mock = await startMockLlm({ models: ["mock-model", "mock-model-large", "other-model"] });
    ws = await tempWorkspace();
    home = await tempHome();
    env = runEnv(mock.url, home.dir, { OPENAI_API_KEY: KEY });
  });
  after(async () => {
    await mock.close();
    await ws.cleanup();
    await home.cleanup();
  });

  /** `crow sessions list --json` of the test's CROW_HOME: the stored session ids. */
  function storedSessions(): string[] {
    const out = execFileSync(process.execPath, [CROW_BIN, "sessions", "list", "--all", "--json"], { env });
    return (JSON.parse(out.toString()) as Array<{ id: string }>).map((s) => s.id);
  }

  /** The run failed before any answer: exit 1, no "Continue with", no session stored. */
  async function assertNothingStored(run: RunResult): Promise<void> {
    assert.equal(run.code, 1, run.stderr);
    assert.equal(run.stdout, "");
    assert.doesNotMatch(run.stderr, /Continue with/);
    assert.doesNotMatch(run.stderr, new RegExp(KEY));
    assert.deepEqual(storedSessions(), []);
  }

  test("nothing listens at the URL: the URL, 'is the server running?', the variable; at once, no retries", async () => {
    const url = `http://127.0.0.1:${await closedPort()}/v1`;
    // Retries that would take minutes if they happened: the run ends after one attempt.
    const run = await runCrow(["-c", ws.dir, "hi"], {
      env: { ...env, OPENAI_BASE_URL: url, CROW_MAX_RETRIES: "4", CROW_RETRY_BASE_MS: "60000" },
    });
    assert.equal(
      run.stderr.trim(),
      `crow: Cannot reach LLM provider "default" at ${url}: connection refused. Is the server running? (the URL comes from OPENAI_BASE_URL)`,
    );
    await assertNothingStored(run);
  });

  test("401 with a JSON body: the provider, the status, the key's variable, never the key", async () => {
    mock.script(httpError(401, { message: "Incorrect API key provided: sk-te***789." }));
    const run = await runCrow(["-c", ws.dir, "hi"], { env });
    assert.match(run.stderr, /crow: LLM provider "default" at http:\/\/127\.0\.0\.1:\d+\/v1 rejected the API key/);
    assert.match(run.stderr, /HTTP 401: Incorrect API key provided/);
    assert.match(run.stderr, /The key comes from OPENAI_API_KEY \(not shown\)/);
    await assertNothingStored(run);
    mock.assertDone();
  });

  test("401 with a plain-text body ('Unauthorized'), and no key set: says to set OPENAI_API_KEY", async () => {
    mock.script({ kind: "http_error", status: 401, headers: { "content-type": "text/plain" }, body: "Unauthorized" });
    const run = await runCrow(["-c", ws.dir, "hi"], { env: runEnv(mock.url, home.dir) });
    assert.match(run.stderr, /rejected the API key \(HTTP 401: Unauthorized\)\. No API key is set: set OPENAI_API_KEY/);
    await assertNothingStored(run);
    mock.assertDone();
  });

  test("403: the request was denied, the key's variable is named", async () => {
    mock.script(httpError(403, { message: "Project does not have access to model mock-model" }));
    const run = await runCrow(["-c", ws.dir, "hi"], { env });
    assert.match(run.stderr, /denied the request \(HTTP 403: Project does not have access to model mock-model\)/);
    assert.match(run.stderr, /The key comes from OPENAI_API_KEY \(not shown\).*allowed to use this model/);
    await assertNothingStored(run);
    mock.assertDone();
  });

  test("an unknown model: the model id and the close names the provider's /models lists", async () => {
    mock.script(httpError(404, { message: "The model `mock-modle` does not exist", code: "model_not_found" }));
    const run = await runCrow(["-c", ws.dir, "hi"], { env: { ...env, CROW_MODEL: "mock-modle" } });
    assert.match(
      run.stderr,
      /does not know the model "mock-modle" \(HTTP 404: The model `mock-modle` does not exist\)/,
    );
    assert.match(run.stderr, /Close names it offers: mock-model(, mock-model-large)?\./);
    assert.doesNotMatch(run.stderr, /other-model/);
    assert.match(run.stderr, /To use another, set CROW_MODEL/);
    await assertNothingStored(run);
    mock.assertDone();
  });

  test("a base URL without /v1 (404 for the route): asks whether the base URL is right", async () => {
    mock.script(httpError(404, { message: "404 page not found" }));
    const run = await runCrow(["-c", ws.dir, "hi"], { env });
    assert.match(run.stderr, /answered HTTP 404: 404 page not found .*Is the base URL right\? .*\/v1/);
    await assertNothingStored(run);
    mock.assertDone();
  });

  describe("a TLS server with a self-signed certificate", () => {
    let server: HttpsServer;
    let url: string;
    before(async () => {
      const key = ws.path("tls/key.pem");
      const cert = ws.path("tls/cert.pem");
      await mkdir(path.dirname(key), { recursive: true });
      execFileSync(
        "openssl",
        [
          "req",
          "-x509",
          "-newkey",
          "rsa:2048",
          "-nodes",
          "-keyout",
          key,
          "-out",
          cert,
          "-days",
          "1",
          "-subj",
          "/CN=127.0.0.1",
        ],
        { stdio: "ignore" },
      );
      server = createHttpsServer({ key: await readFile(key), cert: await readFile(cert) }, (_req, res) => {
        res.writeHead(500).end();
      });
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    });
    after(() => new Promise<void>((resolve) => server.close(() => resolve())));

    test("the certificate problem, NODE_EXTRA_CA_CERTS as the fix, the variable that set the URL", async () => {
      const run = await runCrow(["-c", ws.dir, "hi"], { env: { ...env, OPENAI_BASE_URL: url } });
      assert.match(
        run.stderr,
        new RegExp(
          `crow: TLS connection to LLM provider "default" at ${url.replace(/\./g, "\\.")} failed: self[- ]signed certificate \\(DEPTH_ZERO_SELF_SIGNED_CERT\\)`,
        ),
      );
      assert.match(run.stderr, /NODE_EXTRA_CA_CERTS=.*\(the URL comes from OPENAI_BASE_URL\)/);
      await assertNothingStored(run);
    });
  });

  test("a session that got an answer is kept and offered to continue", async () => {
    mock.script(textReply("Hi."));
    const run = await runCrow(["-c", ws.dir, "hi"], { env });
    assert.equal(run.code, 0, run.stderr);
    const id = /Continue with: crow run -s (\S+)/.exec(run.stderr)?.[1];
    assert.ok(id, run.stderr);
    assert.deepEqual(storedSessions(), [id]);
    mock.assertDone();
  });

  test("usage and config errors (--mode yolo, an unknown --model, no provider) exit 2 and store nothing", async () => {
    const fresh = await tempHome();
    try {
      const freshEnv = runEnv(mock.url, fresh.dir, { CROW_MODELS: "mock-model,mock-large" });
      const mode = await runCrow(["-c", ws.dir, "--mode", "yolo", "hi"], { env: freshEnv });
      assert.equal(mode.code, 2);
      assert.match(mode.stderr, /unknown mode "yolo" \(available: code, ask, read-only\)/);
      const model = await runCrow(["-c", ws.dir, "--model", "nope", "hi"], { env: freshEnv });
      assert.equal(model.code, 2);
      assert.match(model.stderr, /unknown model "nope" \(available: mock-model, mock-large\)/);
      const none = await runCrow(["-c", ws.dir, "hi"], { env: runEnv("", fresh.dir, { OPENAI_BASE_URL: undefined }) });
      assert.equal(none.code, 2);
      assert.match(none.stderr, /^crow: No LLM provider configured: set OPENAI_BASE_URL/);
      // A value crow-mcp would refuse (it then does not start, and the model has no tools): refused here, named.
      const web = await runCrow(["-c", ws.dir, "hi"], { env: { ...freshEnv, CROW_WEB_TIMEOUT: "20s" } });
      assert.equal(web.code, 2);
      assert.match(web.stderr, /CROW_WEB_TIMEOUT must be a positive number of seconds, got "20s" \(crow-mcp reads it/);
      for (const run of [mode, model, none, web]) assert.doesNotMatch(run.stderr, /Continue with/);
      const out = execFileSync(process.execPath, [CROW_BIN, "sessions", "list", "--json"], { env: freshEnv });
      assert.deepEqual(JSON.parse(out.toString()), []);
    } finally {
      await fresh.cleanup();
    }
  });

  test("after crow init, OPENAI_BASE_URL on the command line wins over config.yaml, and a notice says so", async () => {
    const fresh = await tempHome();
    try {
      const unused = `http://127.0.0.1:${await closedPort()}/v1`;
      await writeFile(
        path.join(fresh.dir, "config.yaml"),
        `providers:\n  local: { base_url: "${unused}" }\nmodels:\n  coder: { provider: local, model: mock-model }\n`,
      );
      mock.script(textReply("From the environment's server."));
      const run = await runCrow(["-c", ws.dir, "hi"], { env: runEnv(mock.url, fresh.dir, { CROW_MODEL: undefined }) });
      assert.equal(run.code, 0, run.stderr);
      assert.equal(run.stdout, "From the environment's server.\n");
      assert.match(
        run.stderr,
        /OPENAI_BASE_URL is set in the environment: model "mock-model" at http:\/\/127\.0\.0\.1:\d+\/v1 instead of the default model "coder" of .*config\.yaml \(unset OPENAI_BASE_URL to use .*config\.yaml\)/,
      );
      mock.assertDone();
    } finally {
      await fresh.cleanup();
    }
  });

  test("over ACP the editor gets the same message (401; a closed port already at session/new)", async () => {
    const agent = await spawnAcpAgent({ llmUrl: mock.url, env: { OPENAI_API_KEY: KEY } });
    try {
      const { sessionId } = await agent.newSession(ws.dir);
      mock.script(httpError(401, { body: "Unauthorized" }));
      await assert.rejects(agent.prompt(sessionId, "hi"), (error: RpcError) => {
        assert.match(
          error.message ?? "",
          /LLM provider "default" at .* rejected the API key \(HTTP 401: Unauthorized\)/,
        );
        assert.match(error.message ?? "", /OPENAI_API_KEY/);
        assert.doesNotMatch(error.message ?? "", new RegExp(KEY));
        return true;
      });
      mock.assertDone();
    } finally {
      await agent.close();
    }
    const url = `http://127.0.0.1:${await closedPort()}/v1`;
    const down = await spawnAcpAgent({ llmUrl: url, env: { CROW_MAX_RETRIES: "4", CROW_RETRY_BASE_MS: "60000" } });
    try {
      // Nothing listens: the session is refused as not signed in (ACP's auth-required), not its first prompt.
      await assert.rejects(down.newSession(ws.dir), (error: RpcError) => {
        assert.equal(error.code, -32000);
        assert.match(error.message ?? "", /connection refused\)\. Is the server running\?/);
        return true;
      });
    } finally {
      await down.close();
    }
  });
});
