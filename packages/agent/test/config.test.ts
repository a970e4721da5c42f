// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${VAR} is config.yaml syntax in these strings
/**
 * The configuration's home, the environment alone (no files), and `.env`: how it is read and written, and what of
 * it child processes get.
 */
import assert from "node:assert/strict";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, test } from "node:test";
import { crowHome, loadConfig, parseDotenv, providerProblem, updateDotenv } from "../src/config/index.js";
import { childProcessEnvironment, toolserverEnvironment, useConfigEnvironment } from "../src/tools/child-env.js";
import { configError, configHomes } from "./config-helpers.js";

const homes = configHomes();
const crow = homes.crow;

describe("config home", () => {
  test("CROW_HOME wins over CROW_CONFIG_DIR, which wins over ~/.crow", () => {
    assert.equal(crowHome({ HOME: "/h" }), "/h/.crow");
    assert.equal(crowHome({ HOME: "/h", CROW_CONFIG_DIR: "/c" }), "/c");
    assert.equal(crowHome({ HOME: "/h", CROW_CONFIG_DIR: "/c", CROW_HOME: "/w" }), "/w");
    assert.equal(crowHome({ HOME: "/h", CROW_HOME: "~/x" }), "/h/x");
  });

  test("CROW_CONFIG_DIR is read (upstream advertised it but never read it)", async () => {
    const dir = path.join(homes.root(), "via-config-dir");
    await mkdir(dir, { recursive: true });
    await writeFile(
      path.join(dir, "config.yaml"),
      "providers:\n  p:\n    base_url: http://127.0.0.1:1/v1\nmodels:\n  m:\n    provider: p\n",
    );
    const config = loadConfig({ HOME: homes.plain(), CROW_CONFIG_DIR: dir });
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
