// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${VAR} is config.yaml syntax in these strings
/** config.yaml: interpolation, upstream's files, empty keys, Crow's own keys and `language_servers`. */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { describe, test } from "node:test";
import { compactionThresholdOf, contextWindowOf, loadConfig } from "../src/config/index.js";
import { configError, configHomes, FIXTURES } from "./config-helpers.js";

const homes = configHomes();
const crow = homes.crow;

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
