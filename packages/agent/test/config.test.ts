// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${VAR} is config.yaml syntax in these strings
import assert from "node:assert/strict";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import type { LlmClientOptions, LlmRequest, LlmResult } from "@crow/core";
import {
  type AgentConfig,
  ConfigError,
  CostMeter,
  compactionThresholdOf,
  contextWindowOf,
  createModelRouter,
  crowHome,
  loadConfig,
  parseDotenv,
  providerProblem,
  updateDotenv,
  usageCost,
} from "../src/config/index.js";
import { childProcessEnvironment, toolserverEnvironment, useConfigEnvironment } from "../src/tools/child-env.js";

const FIXTURES = path.join(import.meta.dirname, "fixtures");

let root: string;
let home: string;
let count = 0;

/** A fresh HOME with `~/.crow` holding the given config.yaml and .env (undefined: no file). */
async function crow(config?: string, dotenv?: string): Promise<{ env: NodeJS.ProcessEnv; dir: string }> {
  const fakeHome = path.join(root, `home${count++}`);
  const dir = path.join(fakeHome, ".crow");
  await mkdir(dir, { recursive: true });
  if (config !== undefined) await writeFile(path.join(dir, "config.yaml"), config);
  if (dotenv !== undefined) await writeFile(path.join(dir, ".env"), dotenv);
  return { env: { HOME: fakeHome }, dir };
}

function configError(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof ConfigError, `expected a ConfigError, got ${String(error)}`);
    return error.message;
  }
  assert.fail("expected a ConfigError");
}

before(async () => {
  root = await mkdtemp(path.join(tmpdir(), "crow-config-"));
  home = path.join(root, "plain");
});
after(async () => {
  await rm(root, { recursive: true, force: true });
});

describe("config home", () => {
  test("CROW_HOME wins over CROW_CONFIG_DIR, which wins over ~/.crow", () => {
    assert.equal(crowHome({ HOME: "/h" }), "/h/.crow");
    assert.equal(crowHome({ HOME: "/h", CROW_CONFIG_DIR: "/c" }), "/c");
    assert.equal(crowHome({ HOME: "/h", CROW_CONFIG_DIR: "/c", CROW_HOME: "/w" }), "/w");
    assert.equal(crowHome({ HOME: "/h", CROW_HOME: "~/x" }), "/h/x");
  });

  test("CROW_CONFIG_DIR is read (upstream advertised it but never read it)", async () => {
    const dir = path.join(root, "via-config-dir");
    await mkdir(dir, { recursive: true });
    await writeFile(
      path.join(dir, "config.yaml"),
      "providers:\n  p:\n    base_url: http://127.0.0.1:1/v1\nmodels:\n  m:\n    provider: p\n",
    );
    const config = loadConfig({ HOME: home, CROW_CONFIG_DIR: dir });
    assert.equal(config.home, dir);
    assert.deepEqual(
      config.models.map((m) => m.name),
      ["m"],
    );
  });
});

describe("no config at all", () => {
  test("the environment picks provider and models; the store is SQLite in the config home", async () => {
    const { env, dir } = await crow();
    const config = loadConfig({ ...env, OPENAI_API_KEY: "k", CROW_MODEL: "gpt-x", CROW_MODELS: "gpt-y" });
    assert.equal(config.file, undefined);
    assert.deepEqual(config.providers.default, {
      name: "default",
      baseURL: "https://api.openai.com/v1",
      apiKey: "k",
      urlFrom: "OpenAI's default URL (OPENAI_API_KEY is set, OPENAI_BASE_URL is not)",
      keyFrom: "OPENAI_API_KEY",
    });
    assert.deepEqual(
      config.models.map((m) => [m.name, m.id, m.contextWindow]),
      [
        ["gpt-x", "gpt-x", 128_000],
        ["gpt-y", "gpt-y", 128_000],
      ],
    );
    assert.equal(config.model, "gpt-x");
    assert.equal(config.dbUri, `sqlite:///${dir}/crow.db`);
    assert.deepEqual(config.mcpServers, {});
    assert.equal(config.maxStepsPerTurn, 100);
    assert.equal(config.mode, "code");
    assert.equal(config.models[0]?.maxTokens, undefined, "no max_tokens unless configured");
    assert.equal(providerProblem(config, config.model), undefined);
  });

  test("without a provider, prompts get a clear message instead of a crash", async () => {
    const { env } = await crow();
    const config = loadConfig({ ...env, CROW_MODEL: "m" });
    assert.match(providerProblem(config, "m") ?? "", /No LLM provider configured: set OPENAI_BASE_URL/);
  });
});

describe(".env", () => {
  test("parses comments, export, quotes, escapes, inline comments and multi-line values", () => {
    const parsed = parseDotenv(
      [
        "# comment",
        "A=plain value # trailing comment",
        "export B='single # kept \\n literal'",
        'C="double\\nline \\"quoted\\""',
        'D="spans',
        'two lines"',
        "E=",
        "F = spaced ",
        "URL=http://x/#anchor",
      ].join("\n"),
    );
    assert.deepEqual(parsed, {
      A: "plain value",
      B: "single # kept \\n literal",
      C: 'double\nline "quoted"',
      D: "spans\ntwo lines",
      E: "",
      F: "spaced",
      URL: "http://x/#anchor",
    });
  });

  test("a bad line is reported by number, never by content (it may hold a key)", () => {
    const message = configError(() => parseDotenv("A=1\nsk-secret-value\n", "~/.crow/.env"));
    assert.equal(message, '~/.crow/.env:2: expected KEY=value (a variable name, "=", then the value)');
  });

  test("updates keep other lines and round-trip awkward values", () => {
    const before = "# keys\nOTHER=1\nOPENAI_API_KEY=old\nOPENAI_API_KEY=dup\n";
    const after = updateDotenv(before, { OPENAI_API_KEY: "new", WEIRD: 'a "b" #c $d\nx' });
    assert.equal(after.split("\n")[0], "# keys");
    assert.deepEqual(parseDotenv(after), { OTHER: "1", OPENAI_API_KEY: "new", WEIRD: 'a "b" #c $d\nx' });
  });

  test(".env fills interpolation without overriding real environment variables", async () => {
    const { env } = await crow(
      "providers:\n  p:\n    base_url: ${BASE}\n    api_key: ${KEY}\nmodels:\n  m:\n    provider: p\n",
      "BASE=http://from-dotenv:1/v1\nKEY=dotenv-key\nSEARXNG_URL=http://searx:8080\n",
    );
    const config = loadConfig({ ...env, KEY: "real-key" });
    assert.equal(config.providers.p?.baseURL, "http://from-dotenv:1/v1");
    assert.equal(config.providers.p?.apiKey, "real-key");
    assert.deepEqual(config.dotenv.SEARXNG_URL, "http://searx:8080");
  });

  test("child processes: no keys, no .env but what child_env.allow names; crow-mcp also gets its own settings", async () => {
    const { env } = await crow(
      "providers:\n  p:\n    base_url: http://127.0.0.1:1/v1\n    api_key: ${KEY}\nmodels:\n  m:\n    provider: p\n" +
        "child_env:\n  allow: [GH_TOKEN, 'AWS_*']\n",
      "KEY=sk-dotenv-provider-key\nSEARXNG_URL=http://searx:8080\nCROW_LOG=info\nGH_TOKEN=ghp-from-dotenv-123\nONLY_DOTENV=x\n",
    );
    const agentEnv: NodeJS.ProcessEnv = {
      ...env,
      PATH: "/usr/bin",
      OPENAI_API_KEY: "sk-real-environment-key",
      ALIAS: "sk-real-environment-key",
      // An innocent name holding the configured key (here from .env through ${KEY}): a secret by its value.
      INNOCENT: "sk-dotenv-provider-key",
      AWS_SECRET_ACCESS_KEY: "aws-secret-allowed",
      KEYBOARD: "us",
    };
    const config = loadConfig(agentEnv);
    assert.deepEqual(config.childEnv, { allow: ["GH_TOKEN", "AWS_*"] });
    useConfigEnvironment(config, agentEnv);
    assert.equal(agentEnv.CROW_LOG, "info", "the agent keeps .env's Crow settings for itself");
    assert.equal(agentEnv.ONLY_DOTENV, undefined, "and nothing else of .env");
    const child = childProcessEnvironment(agentEnv);
    assert.deepEqual(child, {
      HOME: env.HOME,
      PATH: "/usr/bin",
      AWS_SECRET_ACCESS_KEY: "aws-secret-allowed",
      KEYBOARD: "us",
      GH_TOKEN: "ghp-from-dotenv-123",
    });
    const toolserver = toolserverEnvironment(agentEnv);
    assert.equal(toolserver.SEARXNG_URL, "http://searx:8080");
    assert.equal(toolserver.CROW_LOG, "info");
    assert.equal(toolserver.CROW_CHILD_ENV_ALLOW, "GH_TOKEN,AWS_*");
    assert.deepEqual(toolserver.CROW_CHILD_ENV_DROP?.split(",").sort(), ["CROW_LOG", "SEARXNG_URL"]);
    assert.equal(toolserver.OPENAI_API_KEY, undefined);
    assert.equal(toolserver.KEY, undefined);
  });

  test("child_env.allow takes variable names and * patterns only", async () => {
    const { env } = await crow("child_env:\n  allow: [GH_TOKEN, 'not a name']\n");
    assert.match(
      configError(() => loadConfig(env)),
      /child_env\.allow\[1\]: invalid variable name "not a name"/,
    );
  });
});

describe("config.yaml: language_servers", () => {
  test("absent: the defaults; off; waits in seconds and per-language servers as crow-mcp takes them", async () => {
    assert.equal(loadConfig((await crow("")).env).languageServers, undefined);
    assert.deepEqual(loadConfig((await crow("language_servers: off\n")).env).languageServers, { off: true });
    const { env } = await crow(
      [
        "language_servers:",
        "  wait_seconds: 3",
        "  start_wait_seconds: '40'",
        "  servers:",
        "    python: off",
        "    typescript: { command: /opt/tsls, args: [--stdio] }",
        "    ruby: { command: solargraph, args: [stdio], files: ['*.rb'] }",
        "",
      ].join("\n"),
    );
    assert.deepEqual(loadConfig(env).languageServers, {
      languages: {
        python: { off: true },
        typescript: { command: "/opt/tsls", args: ["--stdio"] },
        ruby: { command: "solargraph", args: ["stdio"], files: ["*.rb"] },
      },
      waitMs: 3000,
      startWaitMs: 40000,
    });
  });

  test("a language of one's own without its command or files is an error saying what to give", async () => {
    const { env } = await crow("language_servers:\n  servers:\n    ruby: { files: ['*.rb'] }\n");
    assert.match(
      configError(() => loadConfig(env)),
      /language_servers\.servers\.ruby: "ruby" is not a built-in language \(typescript, python, go, rust\): give its command and files/,
    );
  });
});

describe("config.yaml", () => {
  test("interpolation: ${VAR}, ${VAR:-default} (unset or empty), $${ literal, numbers from strings", async () => {
    const { env } = await crow(
      [
        "providers:",
        "  p:",
        "    base_url: http://${HOST:-127.0.0.1}:${PORT:-8080}/v1",
        "    api_key: ${EMPTY:-fallback}",
        "    headers: { X-Template: '$${NOT_A_VAR}' }",
        "models:",
        "  m:",
        "    provider: p",
        "    context_window: ${WINDOW:-32000}",
        "max_steps_per_turn: ${STEPS}",
      ].join("\n"),
    );
    const config = loadConfig({ ...env, PORT: "9000", EMPTY: "", STEPS: "12" });
    assert.equal(config.providers.p?.baseURL, "http://127.0.0.1:9000/v1");
    assert.equal(config.providers.p?.apiKey, "fallback");
    assert.deepEqual(config.providers.p?.headers, { "X-Template": "${NOT_A_VAR}" });
    assert.equal(config.models[0]?.contextWindow, 32_000);
    assert.equal(config.maxStepsPerTurn, 12);
  });

  test("upstream's config.yaml and .env.example load unchanged, but for the refused N_STEPS_BACK_COMPACT", async () => {
    const upstream = await readFile(path.join(FIXTURES, "upstream-config.yaml"), "utf8");
    // The one key Crow refuses (config-upstream-keys.test.ts): without its line the file loads as it is.
    const { env, dir } = await crow(
      upstream.replace(/^N_STEPS_BACK_COMPACT: .*\n/m, ""),
      await readFile(path.join(FIXTURES, "upstream-env"), "utf8"),
    );
    const config = loadConfig(env);
    assert.equal(config.file, path.join(dir, "config.yaml"));
    assert.deepEqual(config.providers.openrouter, {
      name: "openrouter",
      baseURL: "https://openrouter.ai/api/v1",
      apiKey: "sk-or-v1-fixture",
      urlFrom: "providers.openrouter.base_url in ~/.crow/config.yaml",
      // Where the key came from, for error messages: the variable and the file that set it, never the value.
      keyFrom: "OPENROUTER_API_KEY (from ~/.crow/.env), via providers.openrouter.api_key in ~/.crow/config.yaml",
      keyVariable: "OPENROUTER_API_KEY",
    });
    assert.deepEqual(config.models, [
      {
        name: "glm-5",
        id: "z-ai/glm-5",
        provider: "openrouter",
        contextWindow: 128_000,
        contextWindowAssumed: true,
        maxTokens: 38_192,
      },
    ]);
    assert.equal(config.model, "glm-5");
    assert.equal(config.dbUri, `sqlite:///${env.HOME}/.crow/crow.db`);
    // `uvx crow-mcp` runs upstream's Python server: the built-in of this installation serves instead.
    assert.deepEqual(config.mcpServers, {});
    assert.match(config.notes.join("\n"), /using the built-in crow-mcp/);
    assert.equal(config.maxCompactTokens, 180_000);
    assert.equal(config.maxStepsPerTurn, 100);
    assert.equal(config.retry.maxRetries, 3);
  });

  test("keys left empty (entries commented out, as upstream ships them) count as absent", async () => {
    const { env } = await crow("providers:\n  # openrouter: ...\nmodels:\nmcpServers:\n");
    const config = loadConfig({ ...env, OPENAI_BASE_URL: "http://127.0.0.1:1/v1", CROW_MODEL: "local" });
    assert.deepEqual(
      config.models.map((m) => m.name),
      ["local"],
    );
  });

  test("Crow's own keys: default_model, mode, permissions, skills, extensions, other mcpServers", async () => {
    const { env, dir } = await crow(
      [
        "providers:",
        "  a: { base_url: 'http://127.0.0.1:1/v1/' }",
        "  b: { base_url: 'http://127.0.0.1:2/v1', api_key: kb }",
        "models:",
        "  small: { provider: a, model: org/small-1, context_window: 8000 }",
        "  big: { provider: b, price: { input: 3, output: 15, cached_input: 0.3 } }",
        "default_model: big",
        "mode: ask",
        "permissions: { allow: [read, 'crow-mcp_*'], deny: [terminal] }",
        "skills: [~/my-skills, ./local-skills]",
        "extensions: [./ext/audit.js, { module: some-package, options: { level: 2 } }]",
        "mcpServers:",
        "  docs: { url: 'http://127.0.0.1:3/mcp', headers: { Authorization: Bearer x }, timeout: 30 }",
        "  off: { command: nope, disabled: true }",
        "  crow-mcp: { command: node, args: [/opt/my-crow-mcp.js, 1] }",
      ].join("\n"),
    );
    const config = loadConfig(env);
    assert.equal(config.providers.a?.baseURL, "http://127.0.0.1:1/v1");
    assert.equal(config.model, "big");
    assert.deepEqual(config.models[1], {
      name: "big",
      id: "big",
      provider: "b",
      contextWindow: 128_000,
      contextWindowAssumed: true,
      price: { input: 3, output: 15, cachedInput: 0.3, currency: "USD" },
    });
    assert.equal(config.mode, "ask");
    assert.deepEqual(config.permissions, { allow: ["read", "crow-mcp_*"], ask: [], deny: ["terminal"] });
    assert.deepEqual(config.skills, {
      enabled: true,
      dirs: [path.join(env.HOME as string, "my-skills"), path.join(dir, "local-skills")],
    });
    assert.deepEqual(config.extensions, [
      { module: path.join(dir, "ext/audit.js"), options: {} },
      { module: "some-package", options: { level: 2 } },
    ]);
    assert.deepEqual(Object.keys(config.mcpServers), ["docs", "crow-mcp"]);
    assert.deepEqual(config.mcpServers["crow-mcp"]?.args, ["/opt/my-crow-mcp.js", "1"]);
    assert.equal(contextWindowOf(config, "small"), 8000);
    assert.equal(compactionThresholdOf(config, "small"), 6400);
    assert.equal(compactionThresholdOf(config, "big"), 120_000);
    // CROW_MODEL picks among the configured models, by name or provider id.
    assert.equal(loadConfig({ ...env, CROW_MODEL: "org/small-1" }).model, "small");
  });
});

describe("config.yaml and the environment: the environment wins for what it names, and says so", () => {
  const yaml = [
    "providers:",
    "  local: { base_url: 'http://127.0.0.1:11434/v1' }",
    "models:",
    "  coder: { provider: local, model: qwen3-coder, context_window: 32768 }",
    "  small: { provider: local, model: qwen3-small }",
    "default_model: coder",
  ].join("\n");

  test("OPENAI_BASE_URL in the environment sends the default model there, with a notice", async () => {
    const { env } = await crow(yaml);
    const config = loadConfig({ ...env, OPENAI_BASE_URL: "http://127.0.0.1:18099/v1/" });
    assert.equal(config.model, "qwen3-coder");
    const model = config.models[0];
    assert.deepEqual(model, { name: "qwen3-coder", id: "qwen3-coder", provider: "default", contextWindow: 32768 });
    assert.equal(config.providers.default?.baseURL, "http://127.0.0.1:18099/v1");
    assert.equal(config.providers.default?.urlFrom, "OPENAI_BASE_URL");
    // The configured models stay in the picker.
    assert.deepEqual(
      config.models.map((m) => m.name),
      ["qwen3-coder", "coder", "small"],
    );
    assert.deepEqual(config.notices, [
      'OPENAI_BASE_URL is set in the environment: model "qwen3-coder" at http://127.0.0.1:18099/v1 instead of the default model "coder" of ~/.crow/config.yaml (unset OPENAI_BASE_URL to use ~/.crow/config.yaml)',
    ]);
  });

  test("with CROW_MODEL too, that model runs at the environment's URL", async () => {
    const { env } = await crow(yaml);
    const config = loadConfig({ ...env, OPENAI_BASE_URL: "http://127.0.0.1:18099/v1", CROW_MODEL: "llama3.1" });
    assert.equal(config.model, "llama3.1");
    assert.equal(config.models[0]?.provider, "default");
    assert.match(config.notices[0] ?? "", /model "llama3\.1" at http:\/\/127\.0\.0\.1:18099\/v1 instead of/);
  });

  test("CROW_MODEL alone picks among the configured models, with a notice when it differs from default_model", async () => {
    const { env } = await crow(yaml);
    const config = loadConfig({ ...env, CROW_MODEL: "small" });
    assert.equal(config.model, "small");
    assert.equal(config.models.find((m) => m.name === "small")?.provider, "local");
    assert.deepEqual(config.notices, [
      'CROW_MODEL is set in the environment: model "small" instead of "coder" of ~/.crow/config.yaml',
    ]);
    assert.deepEqual(loadConfig({ ...env, CROW_MODEL: "coder" }).notices, []);
  });

  test("the environment's model keeps what config.yaml says of the model it stands for: window and levels", async () => {
    const { env } = await crow(
      [
        "providers:",
        "  local: { base_url: 'http://127.0.0.1:11434/v1' }",
        "models:",
        "  mock-model: { provider: local, context_window: 10000, reasoning_effort: [low, high] }",
        "default_model: mock-model",
      ].join("\n"),
    );
    const config = loadConfig({ ...env, OPENAI_BASE_URL: "http://127.0.0.1:18099/v1" });
    assert.deepEqual(config.models, [
      {
        name: "mock-model",
        id: "mock-model",
        provider: "default",
        contextWindow: 10000,
        reasoningEfforts: ["low", "high"],
      },
    ]);
    assert.equal(compactionThresholdOf(config, "mock-model"), 8000);
    // The same name on both sides: the notice does not say "model X instead of the default model X".
    assert.deepEqual(config.notices, [
      'OPENAI_BASE_URL is set in the environment: model "mock-model" at http://127.0.0.1:18099/v1 instead of its provider in ~/.crow/config.yaml (unset OPENAI_BASE_URL to use ~/.crow/config.yaml)',
    ]);
  });

  test("CROW_CONTEXT_WINDOW counts for the compaction threshold of the environment's model", async () => {
    const { env } = await crow();
    const base = { ...env, OPENAI_BASE_URL: "http://127.0.0.1:1/v1" };
    const given = loadConfig({ ...base, CROW_MODEL: "m", CROW_CONTEXT_WINDOW: "10000" });
    assert.equal(compactionThresholdOf(given, "m"), 8000);
    // Nobody gave a window: the 120 000 default, not 80 % of the assumed 128 000.
    assert.equal(compactionThresholdOf(loadConfig({ ...base, CROW_MODEL: "m" }), "m"), 120_000);
  });

  test("OPENAI_BASE_URL in .env does not override config.yaml (both are the saved setup): no notice", async () => {
    const { env } = await crow(yaml, "OPENAI_BASE_URL=http://127.0.0.1:18099/v1\n");
    const config = loadConfig(env);
    assert.equal(config.model, "coder");
    assert.equal(config.providers.default, undefined);
    assert.deepEqual(config.notices, []);
  });
});

describe("config errors name the file, the key and what was expected", () => {
  test("bad YAML: line and column", async () => {
    const { env } = await crow("models:\n  fast:\n    provider: [openai\n  slow: {}\n");
    assert.equal(
      configError(() => loadConfig(env)),
      "~/.crow/config.yaml:4:3: invalid YAML: Flow sequence in block collection must be sufficiently indented and end with a ]",
    );
  });

  test("unknown provider, with a suggestion", async () => {
    const { env } = await crow(
      "providers:\n  openai: { base_url: 'https://api.openai.com/v1' }\n  local: { base_url: 'http://127.0.0.1:8080/v1' }\nmodels:\n  fast: { provider: opneai }\n  slow: { provider: nowhere }\n",
    );
    assert.equal(
      configError(() => loadConfig(env)),
      [
        '~/.crow/config.yaml: models.fast.provider: unknown provider "opneai" (did you mean "openai"? known: openai, local)',
        '~/.crow/config.yaml: models.slow.provider: unknown provider "nowhere" (known: openai, local)',
      ].join("\n"),
    );
  });

  test("two swapped letters are one typo: provider mokc gets did-you-mean mock", async () => {
    const { env } = await crow(
      "providers:\n  mock: { base_url: 'http://127.0.0.1:8080/v1' }\nmodels:\n  fast: { provider: mokc }\n",
    );
    assert.equal(
      configError(() => loadConfig(env)),
      '~/.crow/config.yaml: models.fast.provider: unknown provider "mokc" (did you mean "mock"? known: mock)',
    );
  });

  test("missing environment variable", async () => {
    const { env } = await crow(
      "providers:\n  openrouter:\n    base_url: https://openrouter.ai/api/v1\n    api_key: ${OPENROUTER_API_KEY}\n",
    );
    assert.equal(
      configError(() => loadConfig(env)),
      "~/.crow/config.yaml: providers.openrouter.api_key: environment variable OPENROUTER_API_KEY is not set (set it in the environment or the .env file, or write ${OPENROUTER_API_KEY:-default})",
    );
  });

  test("wrong types, bad values and unknown keys, all reported at once", async () => {
    const { env } = await crow(
      [
        "providers:",
        "  p: { base_url: localhost:8080 }",
        "models:",
        "  m: { provider: p, context_window: lots, contxt: 1 }",
        "max_steps_per_turn: 0",
        "mode: yolo",
        "mcpServers: { s: { transport: http } }",
        "max_step_per_turn: 5",
      ].join("\n"),
    );
    assert.equal(
      configError(() => loadConfig(env)),
      [
        '~/.crow/config.yaml: providers.p.base_url: expected an http(s) URL, got "localhost:8080"',
        '~/.crow/config.yaml: models.m.context_window: expected a number, got "lots"',
        "~/.crow/config.yaml: models.m.contxt: unknown key (known: provider, model, context_window, price, reasoning_effort, max_tokens)",
        "~/.crow/config.yaml: mcpServers.s.url: missing: the http transport needs a url",
        "~/.crow/config.yaml: max_steps_per_turn: expected a number ≥ 1, got 0",
        '~/.crow/config.yaml: mode: expected one of code, ask, read-only, got "yolo"',
        '~/.crow/config.yaml: max_step_per_turn: unknown key (did you mean "max_steps_per_turn"?)',
      ].join("\n"),
    );
  });

  test("a missing required key and a top level that is not a mapping", async () => {
    const missing = await crow("providers:\n  p: { api_key: k }\n");
    assert.equal(
      configError(() => loadConfig(missing.env)),
      "~/.crow/config.yaml: providers.p.base_url: missing (expected a string)",
    );
    const list = await crow("- a\n- b\n");
    assert.equal(
      configError(() => loadConfig(list.env)),
      "~/.crow/config.yaml: expected a mapping of keys at the top level, got a list",
    );
  });

  test("skills: a mapping with enabled, dirs and embeddings (base_url, model, api_key from the env, dimensions)", async () => {
    const { env, dir } = await crow(
      [
        "skills:",
        "  enabled: false",
        "  dirs: [./team-skills]",
        "  embeddings:",
        "    base_url: http://127.0.0.1:9/v1/",
        "    model: nomic-embed-text",
        "    api_key: ${EMBED_KEY}",
        "    dimensions: '256'",
      ].join("\n"),
    );
    assert.deepEqual(loadConfig({ ...env, EMBED_KEY: "k1" }).skills, {
      enabled: false,
      dirs: [path.join(dir, "team-skills")],
      embeddings: { baseURL: "http://127.0.0.1:9/v1", model: "nomic-embed-text", apiKey: "k1", dimensions: 256 },
    });
  });

  test("skills.embeddings errors: URL, missing model, dimensions, unknown key", async () => {
    const { env } = await crow(
      ["skills:", "  embeddings: { base_url: localhost:9, dimensions: 0, modl: x }", "  dir: [a]"].join("\n"),
    );
    assert.equal(
      configError(() => loadConfig(env)),
      [
        '~/.crow/config.yaml: skills.embeddings.base_url: expected an http(s) URL, got "localhost:9"',
        "~/.crow/config.yaml: skills.embeddings.model: missing (expected a string)",
        "~/.crow/config.yaml: skills.embeddings.dimensions: expected a number ≥ 1, got 0",
        '~/.crow/config.yaml: skills.embeddings.modl: unknown key (did you mean "model"?)',
        '~/.crow/config.yaml: skills.dir: unknown key (did you mean "dirs"?)',
      ].join("\n"),
    );
  });

  test("default_model and CROW_MODEL must name a configured model", async () => {
    const { env } = await crow("providers:\n  p: { base_url: 'http://h/v1' }\nmodels:\n  a: { provider: p }\n");
    assert.equal(
      configError(() => loadConfig({ ...env, CROW_MODEL: "zzz" })),
      'CROW_MODEL="zzz" is not a model of ~/.crow/config.yaml (known: a)',
    );
    const bad = await crow(
      "providers:\n  p: { base_url: 'http://h/v1' }\nmodels:\n  a: { provider: p }\ndefault_model: b\n",
    );
    assert.equal(
      configError(() => loadConfig(bad.env)),
      '~/.crow/config.yaml: default_model: "b" is not one of models (a)',
    );
  });
});

describe("models at run time", () => {
  function twoProviders(): AgentConfig {
    return {
      ...loadConfig({ HOME: home }),
      providers: {
        a: { name: "a", baseURL: "http://a/v1", apiKey: "ka" },
        b: { name: "b", baseURL: "http://b/v1" },
      },
      models: [
        { name: "fast", id: "org/fast-1", provider: "a", contextWindow: 1000 },
        { name: "slow", id: "slow", provider: "b", contextWindow: 2000 },
      ],
    };
  }

  test("the router sends each model to its provider with its id; one client per provider, made lazily", async () => {
    const made: LlmClientOptions[] = [];
    const seen: Array<{ provider: string; model: string }> = [];
    const router = createModelRouter(twoProviders(), (options) => {
      made.push(options);
      return {
        async stream(request: LlmRequest): Promise<LlmResult> {
          seen.push({ provider: options.baseURL, model: request.model });
          return {
            ok: true,
            message: { role: "assistant", content: "" },
            toolCalls: [],
            finishReason: "stop",
            attempts: 1,
          };
        },
      };
    });
    assert.equal(made.length, 0);
    await router.stream({ model: "fast", messages: [] });
    await router.stream({ model: "slow", messages: [] });
    await router.stream({ model: "fast", messages: [] });
    assert.deepEqual(seen, [
      { provider: "http://a/v1", model: "org/fast-1" },
      { provider: "http://b/v1", model: "slow" },
      { provider: "http://a/v1", model: "org/fast-1" },
    ]);
    assert.deepEqual(
      made.map((m) => [m.baseURL, m.apiKey]),
      [
        ["http://a/v1", "ka"],
        ["http://b/v1", undefined],
      ],
    );
    const unknown = await router.stream({ model: "gone", messages: [] });
    assert.ok(!unknown.ok);
    assert.match(unknown.error.message, /Model "gone" is not configured \(known: fast, slow\)/);
  });

  test("cost per million tokens, cached prompt tokens at their own price, cumulative per session", () => {
    const price = { input: 2, output: 10, cachedInput: 0.5, currency: "EUR" };
    const usage = { promptTokens: 1000, completionTokens: 100, totalTokens: 1100, cachedTokens: 400 };
    assert.equal(usageCost(price, usage), (600 * 2 + 400 * 0.5 + 100 * 10) / 1e6);
    const meter = new CostMeter();
    const model = { name: "m", id: "m", provider: "p", contextWindow: 1, price };
    meter.add(model, usage);
    assert.deepEqual(meter.add(model, usage), { amount: (2 * 2400) / 1e6, currency: "EUR" });
    assert.equal(meter.add({ ...model, price: undefined }, usage), undefined);
  });
});
