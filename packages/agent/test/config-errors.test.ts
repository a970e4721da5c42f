// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${VAR} is config.yaml syntax in these strings
/** Configuration errors name the file, the key and what was expected. */
import assert from "node:assert/strict";
import path from "node:path";
import { describe, test } from "node:test";
import { loadConfig } from "../src/config/index.js";
import { configError, configHomes } from "./config-helpers.js";

const homes = configHomes();
const crow = homes.crow;

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

  test("a value crow-mcp would refuse, from the environment or .env, is a config error naming it", async () => {
    const { env } = await crow(undefined, "CROW_LSP=OFF\n");
    assert.equal(
      configError(() => loadConfig(env)),
      'CROW_LSP must be on or off, got "OFF" (crow-mcp reads it; set it in the environment or .env, or remove it).',
    );
    assert.match(
      configError(() => loadConfig({ ...env, CROW_LSP: "off", SEARXNG_URL: "searx.local" })),
      /^SEARXNG_URL must be an http or https URL, got "searx.local"/,
    );
  });
});
