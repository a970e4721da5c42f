/**
 * `crow doctor` against a healthy setup (exit 0, every line ✓ or –) and against each broken one (exit 1, a ✗ line
 * naming the problem and what to do). The built binary, a private HOME, the mock LLM as provider, a plain HTTP
 * server as SearXNG, all on 127.0.0.1.
 */
import assert from "node:assert/strict";
import { chmod, mkdir, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { CROW_BIN, closedPort, type MockLlm, REPO_ROOT, startMockLlm } from "@crow/testkit";
import { checkNode } from "../src/commands/doctor/checks.js";
import { runEnv, runProcess, tempHome } from "./run-helpers.js";

describe("crow doctor", { timeout: 120_000 }, () => {
  let mock: MockLlm;
  let searxng: Server;
  let searxngUrl: string;
  const homes: Array<() => Promise<void>> = [];

  before(async () => {
    mock = await startMockLlm();
    searxng = createServer((_req, res) => res.end("{}"));
    await new Promise<void>((resolve) => searxng.listen(0, "127.0.0.1", resolve));
    searxngUrl = `http://127.0.0.1:${(searxng.address() as AddressInfo).port}`;
  });
  after(async () => {
    await mock.close();
    await new Promise((resolve) => searxng.close(resolve));
    for (const cleanup of homes) await cleanup();
  });

  /** `crow doctor` in a fresh HOME (CROW_HOME inside it, 0700), `prepare` setting it up first. */
  async function doctor(extra: Record<string, string | undefined> = {}, prepare?: (crowHome: string) => Promise<void>) {
    const home = await tempHome();
    homes.push(home.cleanup);
    const crowHome = path.join(home.dir, ".crow");
    await mkdir(crowHome, { mode: 0o700 });
    await prepare?.(crowHome);
    const env = runEnv(mock.url, home.dir, { CROW_HOME: crowHome, SEARXNG_URL: searxngUrl, ...extra });
    return runProcess(process.execPath, [CROW_BIN, "doctor"], { env });
  }

  test("a healthy setup: every check ✓ (or – for what is not set up), exit 0", async () => {
    const run = await doctor();
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.doesNotMatch(run.stdout, /✗/);
    assert.match(run.stdout, /^✓ Node\.js \d+\.\d+\.\d+$/m);
    assert.match(run.stdout, /^✓ store: SQLite \([\w:-]+\) at .*crow\.db, writable$/m);
    assert.match(run.stdout, /^✓ Crow home .*\.crow \(mode 700\)$/m);
    assert.match(run.stdout, /^✓ provider "default": http:\/\/127\.0\.0\.1:\d+\/v1 from OPENAI_BASE_URL, no key$/m);
    assert.match(run.stdout, /^✓ provider "default" answers: 1 model\(s\) \(mock-model\)$/m);
    assert.match(run.stdout, /^✓ default model "mock-model" is offered by "default"$/m);
    assert.match(run.stdout, /^✓ default model "mock-model" from CROW_MODEL$/m);
    assert.match(run.stdout, /^✓ SearXNG answers at http:\/\/127\.0\.0\.1:\d+ \(web_search\)$/m);
    assert.match(run.stdout, /^✓ MCP server "crow-mcp" starts \(\d+ tools\)$/m);
    assert.match(run.stdout, /^(✓|–) sandbox: /m);
    assert.match(run.stdout, /Crow is ready\.\n$/);
  });

  const broken: Array<{
    name: string;
    env?: Record<string, string | undefined>;
    prepare?: (crowHome: string) => Promise<void>;
    expect: RegExp;
    /** The exit code: 1 (a check failed) unless said; 2 for a configuration that does not load. */
    code?: number;
  }> = [
    {
      name: "the provider does not answer",
      env: { OPENAI_BASE_URL: "" },
      prepare: async () => {},
      expect:
        /^✗ provider "default": cannot reach http:\/\/127\.0\.0\.1:\d+\/v1\/models: ECONNREFUSED\n {4}→ start the server or correct OPENAI_BASE_URL$/m,
    },
    {
      name: "the default model is not one the provider offers",
      env: { CROW_MODEL: "mock-modle" },
      expect:
        /^✗ default model "mock-modle" \(id mock-modle\) is not offered by "default"\n {4}→ pick one of its models/m,
    },
    {
      name: "no provider at all",
      env: { OPENAI_BASE_URL: undefined, CROW_MODEL: undefined },
      expect: /^✗ no LLM provider configured\n {4}→ set OPENAI_BASE_URL/m,
    },
    {
      name: "the database cannot be written",
      prepare: (crowHome) => writeFile(path.join(crowHome, "not-a-dir"), ""),
      env: { CROW_DB_URI: "sqlite:///not-a-dir/crow.db" },
      expect:
        /^✗ store: SQLite \([\w:-]+\): cannot open the SQLite database .*\n {4}→ set CROW_HOME to a writable directory, or CROW_DB_URI/m,
    },
    {
      name: "config.yaml is broken",
      prepare: (crowHome) => writeFile(path.join(crowHome, "config.yaml"), "models:\n  fast: { provider: nowhere }\n"),
      // The hint names the page that says what config.yaml takes (it named a README section the README moved out).
      expect:
        /^✗ configuration: .*config\.yaml: models\.fast\.provider: unknown provider "nowhere".*\n {4}→ correct it \(see docs\/configuration\.md\)$/m,
      code: 2,
    },
    {
      name: "the Crow home is readable by others",
      prepare: (crowHome) => chmod(crowHome, 0o755),
      expect: /^✗ Crow home .*\.crow is readable by others \(mode 755\).*\n {4}→ chmod 700 /m,
    },
    {
      name: "SearXNG does not answer at SEARXNG_URL",
      env: { SEARXNG_URL: "CLOSED" },
      expect: /^✗ SearXNG at http:\/\/127\.0\.0\.1:\d+: ECONNREFUSED\n {4}→ start SearXNG or correct SEARXNG_URL$/m,
    },
    {
      name: "an MCP server does not start",
      prepare: (crowHome) =>
        writeFile(path.join(crowHome, "config.yaml"), "mcpServers:\n  docs: { command: /nonexistent/docs-server }\n"),
      expect: /^✗ MCP server "docs": .*\n {4}→ correct mcpServers\.docs in config\.yaml/m,
    },
  ];
  for (const each of broken) {
    test(`broken: ${each.name} → ✗ with what to do, exit ${each.code ?? 1}`, async () => {
      const env = { ...each.env };
      if (env.SEARXNG_URL === "CLOSED") env.SEARXNG_URL = `http://127.0.0.1:${await closedPort()}`;
      if (env.OPENAI_BASE_URL === "") env.OPENAI_BASE_URL = `http://127.0.0.1:${await closedPort()}/v1`;
      const run = await doctor(env, each.prepare);
      assert.equal(run.code, each.code ?? 1, run.stdout + run.stderr);
      assert.match(run.stdout, each.expect);
      assert.match(run.stdout, /Something needs fixing \(✗ above\)\.\n$/);
    });
  }

  test("language servers: the ones found (the repository's typescript-language-server, on PATH), the ones not, and those switched off", async () => {
    const bin = path.join(REPO_ROOT, "node_modules", ".bin");
    const run = await doctor({ PATH: `${bin}${path.delimiter}/usr/bin:/bin`, CROW_LSP: undefined }, (crowHome) =>
      writeFile(path.join(crowHome, "config.yaml"), "language_servers:\n  servers:\n    rust: off\n"),
    );
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.match(
      run.stdout,
      /^✓ language server typescript: .*node_modules\/\.bin\/typescript-language-server checks \*\.ts /m,
    );
    assert.match(
      run.stdout,
      /^– language server go: none found \(gopls on PATH or in the project's node_modules\/\.bin\)\n {4}→ install one/m,
    );
    assert.doesNotMatch(run.stdout, /language server rust/);
  });

  test(".env's CROW_LSP=off and SEARXNG_URL count, as crow-mcp takes them from there", async () => {
    const run = await doctor({ CROW_LSP: undefined, SEARXNG_URL: undefined }, (crowHome) =>
      writeFile(path.join(crowHome, ".env"), `CROW_LSP=off\nSEARXNG_URL=${searxngUrl}\n`, { mode: 0o600 }),
    );
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.match(run.stdout, /^– language servers: off by CROW_LSP=off /m);
    assert.match(run.stdout, /^✓ SearXNG answers at http:\/\/127\.0\.0\.1:\d+ \(web_search\)$/m);
  });

  test("OPENAI_BASE_URL alone: the endpoint's only model is the default, as crow run takes it", async () => {
    const run = await doctor({ CROW_MODEL: undefined });
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.match(run.stdout, /^✓ default model "mock-model" from the endpoint's only model \(GET \/models\)$/m);
    assert.match(run.stdout, /^– model "mock-model": the only model at /m);
  });

  test("HOME not writable: said once, with CROW_HOME as the way out; no 'does not exist yet'", async () => {
    const home = await tempHome();
    homes.push(home.cleanup);
    // A HOME its user cannot write: root ignores permissions, so as root the check runs as nobody.
    const asRoot = process.getuid?.() === 0;
    await chmod(home.dir, 0o755);
    const user = path.join(home.dir, "user");
    await mkdir(user, { mode: 0o755 });
    if (!asRoot) await chmod(user, 0o555);
    const env = runEnv(mock.url, user, { CROW_HOME: undefined, SEARXNG_URL: searxngUrl });
    const argv = [CROW_BIN, "doctor"];
    const run = asRoot
      ? await runProcess("setpriv", ["--reuid=65534", "--regid=65534", "--clear-groups", process.execPath, ...argv], {
          env,
        })
      : await runProcess(process.execPath, argv, { env });
    await chmod(user, 0o755);
    assert.equal(run.code, 1, run.stdout + run.stderr);
    assert.match(
      run.stdout,
      /^✗ Crow home ~\/\.crow cannot be made: HOME \(.*\/user\) is not writable; config, \.env and the store \(crow\.db\) live there\n {4}→ set CROW_HOME to a directory you can write \(e\.g\. export CROW_HOME=\/tmp\/crow-\$USER\), or make HOME writable\n/m,
    );
    assert.equal(run.stdout.match(/set CROW_HOME/g)?.length, 1, run.stdout);
    assert.doesNotMatch(run.stdout, /does not exist yet|store:/);
  });

  test("a Node.js older than 20.19 is ✗", () => {
    assert.equal(checkNode("20.10.0").verdict, "fail");
    assert.equal(checkNode("20.19.0").verdict, "ok");
    assert.equal(checkNode("24.1.0").verdict, "ok");
  });
});
