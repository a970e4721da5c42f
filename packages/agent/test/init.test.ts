// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${VAR} is config.yaml syntax in these strings
import assert from "node:assert/strict";
import { spawn as spawnProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { stat } from "node:fs/promises";
import { after, before, describe, test } from "node:test";
import { CROW_BIN, type MockLlm, startMockLlm, type TempWorkspace, tempWorkspace } from "@crow/testkit";
import { spawn as spawnPty } from "@lydell/node-pty";
import { parse } from "yaml";
import { loadConfig, parseDotenv } from "../src/config/index.js";

const KEY = "sk-test-7f3a9c1e-do-not-print";

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `crow init …` with `stdin` piped in, in a clean environment (HOME and CROW_HOME under the workspace). */
function runInit(args: string[], env: Record<string, string>, stdin = ""): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawnProcess(process.execPath, [CROW_BIN, "init", ...args], {
      env: { PATH: process.env.PATH ?? "", ...env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(stdin);
  });
}

describe("crow init by flags", () => {
  let mock: MockLlm;
  let ws: TempWorkspace;
  let n = 0;
  const home = () => ws.path(`home${n}`);
  const env = () => ({ HOME: ws.dir, CROW_HOME: home() });

  before(async () => {
    mock = await startMockLlm({ models: ["mock-model", "org/big-model"] });
    ws = await tempWorkspace();
  });
  after(async () => {
    await mock.close();
    await ws.cleanup();
  });

  test("writes config.yaml and .env; the key is only in .env (0600) and never printed", async () => {
    n++;
    const run = await runInit(
      [
        `--provider=mock=${mock.url}`,
        `--api-key=${KEY}`,
        "--model=mock-model",
        "--model=big=mock:org/big-model",
        "--searxng=http://127.0.0.1:8888",
      ],
      env(),
    );
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /Wrote .*config\.yaml and .*\.env \(secrets: MOCK_API_KEY\)/);
    assert.ok(!run.stdout.includes(KEY) && !run.stderr.includes(KEY), "the key is never printed");
    const yamlText = await ws.read(`home${n}/config.yaml`);
    assert.ok(!yamlText.includes(KEY), "the key is not in config.yaml");
    assert.deepEqual(parse(yamlText), {
      providers: { mock: { base_url: mock.url, api_key: "${MOCK_API_KEY}" } },
      models: {
        "mock-model": { provider: "mock", model: "mock-model" },
        big: { provider: "mock", model: "org/big-model" },
      },
      db_uri: `sqlite:///${home()}/crow.db`,
    });
    const dotenv = parseDotenv(await ws.read(`home${n}/.env`));
    assert.deepEqual(dotenv, { MOCK_API_KEY: KEY, SEARXNG_URL: "http://127.0.0.1:8888" });
    assert.equal((await stat(ws.path(`home${n}/.env`))).mode & 0o777, 0o600);
    // What crow acp will load from it.
    const config = loadConfig(env());
    assert.equal(config.providers.mock?.apiKey, KEY);
    assert.deepEqual(
      config.models.map((m) => [m.name, m.id]),
      [
        ["mock-model", "mock-model"],
        ["big", "org/big-model"],
      ],
    );
  });

  test("no key and no SearXNG: config.yaml alone, no 1-byte .env left behind", async () => {
    n++;
    const run = await runInit([`--provider=mock=${mock.url}`, "--model=mock-model"], env());
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^Wrote \S*config\.yaml\.$/m);
    assert.equal(existsSync(ws.path(`home${n}/.env`)), false);
  });

  test("refuses to replace config.yaml without --force; --force replaces it and merges .env", async () => {
    n++;
    const first = await runInit([`--provider=mock=${mock.url}`, "--model=mock-model"], env());
    assert.equal(first.code, 0, first.stderr);
    const before = await ws.read(`home${n}/config.yaml`);
    await ws.write(`home${n}/.env`, "MINE=kept\n");
    const refused = await runInit([`--provider=other=${mock.url}`, "--model=mock-model"], env());
    // Exit 2, as every command's usage errors (the table in crow --help).
    assert.equal(refused.code, 2);
    assert.equal(
      refused.stderr,
      `crow init: ~/home${n}/config.yaml already exists; rerun with --force to replace it\n`,
    );
    assert.equal(await ws.read(`home${n}/config.yaml`), before);
    const forced = await runInit(
      [`--provider=other=${mock.url}`, "--api-key", `other=${KEY}`, "--model=mock-model", "--force"],
      env(),
    );
    assert.equal(forced.code, 0, forced.stderr);
    assert.match(await ws.read(`home${n}/config.yaml`), /other:/);
    assert.deepEqual(parseDotenv(await ws.read(`home${n}/.env`)), { MINE: "kept", OTHER_API_KEY: KEY });
  });

  test("--all-models takes the provider's GET /models list; no model at all lists what is offered", async () => {
    n++;
    const all = await runInit([`--provider=mock=${mock.url}`, "--all-models"], env());
    assert.equal(all.code, 0, all.stderr);
    assert.deepEqual(Object.keys(parse(await ws.read(`home${n}/config.yaml`)).models), ["mock-model", "big-model"]);
    n++;
    const none = await runInit([`--provider=mock=${mock.url}`], env());
    assert.equal(none.code, 2);
    assert.match(none.stderr, /choose models with --model or --all-models \(mock offers mock-model, org\/big-model\)/);
  });

  test("an unreachable GET /models falls back to the typed model name; the key can come from NAME_API_KEY", async () => {
    n++;
    const run = await runInit(["--provider", "down=http://127.0.0.1:9/v1", "--model", "typed-model"], {
      ...env(),
      DOWN_API_KEY: KEY,
    });
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(parse(await ws.read(`home${n}/config.yaml`)).models, {
      "typed-model": { provider: "down", model: "typed-model" },
    });
    assert.deepEqual(parseDotenv(await ws.read(`home${n}/.env`)), { DOWN_API_KEY: KEY });
    n++;
    const all = await runInit(["--provider", "down=http://127.0.0.1:9/v1", "--all-models"], env());
    assert.equal(all.code, 2);
    assert.match(all.stderr, /--all-models: down: cannot reach http:\/\/127\.0\.0\.1:9\/v1\/models/);
  });

  test("PostgreSQL: the password goes to .env and db_uri references it", async () => {
    n++;
    const run = await runInit(
      [`--provider=mock=${mock.url}`, "--model=mock-model", "--db=postgresql://crow:p%40ss@db.local:5432/crow"],
      env(),
    );
    assert.equal(run.code, 0, run.stderr);
    assert.ok(!run.stdout.includes("p%40ss") && !run.stdout.includes("p@ss"));
    assert.equal(
      parse(await ws.read(`home${n}/config.yaml`)).db_uri,
      "postgresql://crow:${POSTGRES_PASSWORD}@db.local:5432/crow",
    );
    assert.equal(parseDotenv(await ws.read(`home${n}/.env`)).POSTGRES_PASSWORD, "p@ss");
    assert.equal(loadConfig(env()).dbUri, "postgresql://crow:p@ss@db.local:5432/crow");
  });

  test("bad flags are usage errors that write nothing", async () => {
    n++;
    const bad = await runInit(["--provider=mock=not-a-url", "--model=m"], env());
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /crow init: provider "mock": base URL "not-a-url" is not an http\(s\) URL/);
    const two = await runInit([`--provider=a=${mock.url}`, `--provider=b=${mock.url}`, "--model=m"], env());
    assert.equal(two.code, 2);
    assert.match(two.stderr, /--model m: say which provider, as PROVIDER:ID \(a, b\)/);
    await assert.rejects(stat(home()));
  });

  test("the wizard reads piped answers too", async () => {
    n++;
    const answers = ["mock", mock.url, KEY, "2", "", "n", "", "", ""].join("\n");
    const run = await runInit([], env(), `${answers}\n`);
    assert.equal(run.code, 0, run.stderr + run.stdout);
    assert.ok(!run.stdout.includes(KEY));
    assert.deepEqual(parse(await ws.read(`home${n}/config.yaml`)).models, {
      "big-model": { provider: "mock", model: "org/big-model" },
    });
    assert.equal(parseDotenv(await ws.read(`home${n}/.env`)).MOCK_API_KEY, KEY);
  });
});

/** A `crow init` in a pseudo-terminal: what the user sees, and typing. */
function ptyInit(env: Record<string, string>) {
  const term = spawnPty(process.execPath, [CROW_BIN, "init"], {
    name: "xterm-256color",
    cols: 120,
    rows: 40,
    env: { PATH: process.env.PATH ?? "", TERM: "xterm-256color", ...env },
  });
  let screen = "";
  let seen = 0;
  const waiters: Array<() => void> = [];
  term.onData((data) => {
    screen += data;
    for (const w of waiters.splice(0)) w();
  });
  const exited = new Promise<number>((resolve) => term.onExit(({ exitCode }) => resolve(exitCode)));
  return {
    get screen() {
      return screen;
    },
    /** Waits until `text` appears after what was already matched, then answers with `line` (if given). */
    async expect(text: string, line?: string): Promise<void> {
      while (!screen.includes(text, seen)) {
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
      seen = screen.indexOf(text, seen) + text.length;
      if (line !== undefined) term.write(`${line}\r`);
    },
    write: (data: string) => term.write(data),
    exited,
  };
}

describe("crow init in a terminal", () => {
  let mock: MockLlm;
  let ws: TempWorkspace;

  before(async () => {
    mock = await startMockLlm({ models: ["mock-model", "org/big-model"] });
    ws = await tempWorkspace();
  });
  after(async () => {
    await mock.close();
    await ws.cleanup();
  });

  test("the wizard: provider, hidden key, models picked from GET /models, store; the key never shows", async () => {
    const home = ws.path("pty-home");
    const t = ptyInit({ HOME: ws.dir, CROW_HOME: home });
    await t.expect("Provider name [openai]: ", "mock");
    await t.expect("Base URL: ", mock.url);
    await t.expect("API key (hidden; empty if none): ", KEY);
    await t.expect("1. mock-model");
    await t.expect("2. org/big-model");
    await t.expect("Models to use (numbers like 1,3-4, all, or ids) [1]: ", "1-2");
    await t.expect("Name for mock-model in the model picker [mock-model]: ", "");
    await t.expect("Name for org/big-model in the model picker [big-model]: ", "large");
    await t.expect("Add another provider? [y/N]: ", "");
    await t.expect(
      "SearXNG URL for web search (empty: none saved; web_search then tries http://localhost:2946)",
      "http://127.0.0.1:8888",
    );
    await t.expect("[sqlite]: ", "");
    // What will be written shows before the question (the key's name, never its value).
    await t.expect("Will write ");
    await t.expect("      mock-model:");
    await t.expect("and add to ");
    await t.expect("MOCK_API_KEY (hidden), SEARXNG_URL=http://127.0.0.1:8888");
    await t.expect("Write the configuration? [Y/n]: ", "y");
    assert.equal(await t.exited, 0, t.screen);
    assert.ok(!t.screen.includes(KEY), "the key is not echoed");
    assert.ok(!t.screen.includes(KEY.slice(0, 8)), "not even partly");
    const yamlText = await ws.read("pty-home/config.yaml");
    assert.ok(!yamlText.includes(KEY));
    assert.deepEqual(parse(yamlText).models, {
      "mock-model": { provider: "mock", model: "mock-model" },
      large: { provider: "mock", model: "org/big-model" },
    });
    assert.deepEqual(parseDotenv(await ws.read("pty-home/.env")), {
      MOCK_API_KEY: KEY,
      SEARXNG_URL: "http://127.0.0.1:8888",
    });
  });

  test("an existing config.yaml is kept unless the user confirms; Ctrl-C quits without writing", async () => {
    await ws.write("keep-home/config.yaml", "# mine\n");
    const declined = ptyInit({ HOME: ws.dir, CROW_HOME: ws.path("keep-home") });
    await declined.expect("exists. Replace it? [y/N]: ", "");
    await declined.expect("Nothing written.");
    assert.equal(await declined.exited, 1);
    assert.equal(await ws.read("keep-home/config.yaml"), "# mine\n");

    const interrupted = ptyInit({ HOME: ws.dir, CROW_HOME: ws.path("ctrl-c-home") });
    await interrupted.expect("Provider name [openai]: ", "mock");
    await interrupted.expect("Base URL: ");
    interrupted.write("\x03");
    assert.equal(await interrupted.exited, 130);
    assert.match(interrupted.screen, /interrupted; nothing written/);
    await assert.rejects(stat(ws.path("ctrl-c-home/config.yaml")));
  });
});
