/**
 * Where each provider setting came from, and which source wins when config.yaml and the environment both name a
 * provider. The rule (docs/configuration.md "Which wins"): a variable set in the process environment wins over config.yaml for
 * what it names, and a notice says so. `OPENAI_BASE_URL` set in the environment sends the default model to that
 * endpoint; `CROW_MODEL` picks the default model. Values from `.env` do not override config.yaml: `.env` belongs to
 * the saved setup, as config.yaml does.
 */

import { ENV_PROVIDER, envModels, OPENAI_BASE_URL } from "./env.js";
import { displayPath } from "./errors.js";
import type { ConfigFile } from "./schema.js";
import type { ModelConfig, ProviderConfig } from "./types.js";

type Env = Readonly<Record<string, string | undefined>>;

/** How a variable is named in messages: `NAME`, or `NAME (from ~/.crow/.env)` when only `.env` sets it. */
export type VariableOrigin = (name: string) => string;

export function variableOrigin(env: Env, dotenvShown: string): VariableOrigin {
  return (name) => (env[name] !== undefined ? name : `${name} (from ${dotenvShown})`);
}

/** The `${VAR}` an `api_key` value was written as (before interpolation), when it is one variable. */
function keyVariable(raw: unknown, provider: string): string | undefined {
  const providers = (raw as { providers?: Record<string, { api_key?: unknown } | null> } | null)?.providers;
  const written = providers?.[provider]?.api_key;
  if (typeof written !== "string") return undefined;
  return /^\$\{(\w+)(:-[^}]*)?\}$/.exec(written.trim())?.[1];
}

/** config.yaml's providers, each with where its URL and key were written. `raw` is the tree before interpolation. */
export function fileProviders(
  entries: ConfigFile["providers"],
  raw: unknown,
  shown: string,
  origin: VariableOrigin,
): Record<string, ProviderConfig> {
  const providers: Record<string, ProviderConfig> = {};
  for (const [name, entry] of Object.entries(entries ?? {})) {
    const variable = keyVariable(raw, name);
    providers[name] = {
      name,
      baseURL: entry.base_url.replace(/\/+$/, ""),
      ...(entry.api_key ? { apiKey: entry.api_key } : {}),
      ...(entry.headers ? { headers: entry.headers } : {}),
      urlFrom: `providers.${name}.base_url in ${shown}`,
      keyFrom: variable
        ? `${origin(variable)}, via providers.${name}.api_key in ${shown}`
        : `providers.${name}.api_key in ${shown}`,
      ...(variable ? { keyVariable: variable } : {}),
    };
  }
  return providers;
}

/** The provider of `OPENAI_BASE_URL` / `OPENAI_API_KEY` (OpenAI's URL when only a key is set), if any. */
export function envProvider(lookup: Env, origin: VariableOrigin): ProviderConfig | undefined {
  const apiKey = lookup.OPENAI_API_KEY?.trim() || undefined;
  const explicit = lookup.OPENAI_BASE_URL?.trim();
  const baseURL = explicit || (apiKey ? OPENAI_BASE_URL : undefined);
  if (!baseURL) return undefined;
  return {
    name: ENV_PROVIDER,
    baseURL: baseURL.replace(/\/+$/, ""),
    ...(apiKey ? { apiKey } : {}),
    urlFrom: explicit
      ? origin("OPENAI_BASE_URL")
      : "OpenAI's default URL (OPENAI_API_KEY is set, OPENAI_BASE_URL is not)",
    keyFrom: origin("OPENAI_API_KEY"),
  };
}

/** What `environmentOverride` decided: the default model and the notice for stderr. */
export interface Override {
  model: string;
  notice: string;
}

/**
 * config.yaml defines models and `OPENAI_BASE_URL` is set in the process environment: the environment's provider is
 * added and the default model runs there. Its id is `CROW_MODEL` (or the configured model it names), else the id of
 * config.yaml's default model; `CROW_MODELS` adds more. The environment's models come first in the picker and
 * shadow configured models of the same name. Mutates `providers` and `models`; undefined when nothing overrides.
 */
export function environmentOverride(
  env: Env,
  lookup: Env,
  origin: VariableOrigin,
  providers: Record<string, ProviderConfig>,
  models: ModelConfig[],
  fileDefault: string | undefined,
  window: { contextWindow: number; windowAssumed: boolean },
  shown: string,
): Override | undefined {
  if (!env.OPENAI_BASE_URL?.trim()) return undefined;
  const provider = envProvider(lookup, origin);
  if (!provider) return undefined;
  const configured = (name: string | undefined) =>
    name === undefined ? undefined : (models.find((m) => m.name === name) ?? models.find((m) => m.id === name));
  const wanted = lookup.CROW_MODEL?.trim();
  const base = configured(wanted) ?? configured(fileDefault);
  const firstId = wanted ? (configured(wanted)?.id ?? wanted) : base?.id;
  if (!firstId) return undefined;
  // An environment model that stands for a configured one (the default's id, or the same name) keeps what the
  // file says about it: its context window, its reasoning levels and its max_tokens.
  const listed = envModels(
    { CROW_MODEL: firstId, CROW_MODELS: lookup.CROW_MODELS },
    window.contextWindow,
    window.windowAssumed,
  ).map((m) => {
    const same = m.id === base?.id ? base : models.find((c) => c.name === m.name);
    if (!same) return m;
    const { contextWindowAssumed: _assumed, ...rest } = m;
    return {
      ...rest,
      contextWindow: same.contextWindow,
      ...(same.contextWindowAssumed ? { contextWindowAssumed: true as const } : {}),
      ...(same.reasoningEfforts ? { reasoningEfforts: same.reasoningEfforts } : {}),
      ...(same.maxTokens !== undefined ? { maxTokens: same.maxTokens } : {}),
    };
  });
  providers[ENV_PROVIDER] = provider;
  const names = new Set(listed.map((m) => m.name));
  const kept = models.filter((m) => !names.has(m.name));
  models.splice(0, models.length, ...listed, ...kept);
  const replaced =
    fileDefault === firstId
      ? ` instead of its provider in ${shown}`
      : fileDefault
        ? ` instead of the default model "${fileDefault}" of ${shown}`
        : ` instead of ${shown}`;
  return {
    model: firstId,
    notice: `OPENAI_BASE_URL is set in the environment: model "${firstId}" at ${provider.baseURL}${replaced} (unset OPENAI_BASE_URL to use ${shown})`,
  };
}

/**
 * Where the default model's name came from, for people (`crow doctor`): `CROW_MODEL` (the environment's, else
 * `.env`'s), config.yaml, or the first of `CROW_MODELS`; undefined when no setting names it (`adoptSingleModel` may
 * then take the endpoint's only model).
 */
export function modelFrom(
  env: Env,
  dotenv: Readonly<Record<string, string>>,
  file: string | undefined,
  models: readonly ModelConfig[],
): string | undefined {
  if (env.CROW_MODEL?.trim()) return "CROW_MODEL";
  if (dotenv.CROW_MODEL?.trim()) return "CROW_MODEL in .env";
  if (file && models.some((m) => m.provider !== ENV_PROVIDER))
    return `default_model (or the first model) in ${displayPath(file)}`;
  if (env.CROW_MODELS?.trim() || dotenv.CROW_MODELS?.trim()) return "the first of CROW_MODELS";
  return undefined;
}
