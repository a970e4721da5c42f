/**
 * The providers and models a configuration offers, and the model new sessions start with: config.yaml's `providers`
 * and `models` (each checked against the providers), else the environment's provider and models; then
 * `default_model`, an `OPENAI_BASE_URL` override (sources.ts) or `CROW_MODEL` picks the starting model.
 */
import { ENV_PROVIDER, envInteger, envModels } from "./env.js";
import { ConfigError, closest, failIn } from "./errors.js";
import type { ConfigFile } from "./schema.js";
import { environmentOverride, envProvider, fileProviders, type VariableOrigin } from "./sources.js";
import type { ModelConfig, ProviderConfig } from "./types.js";

const DEFAULT_CONTEXT_WINDOW = 128_000;
/** The levels of `reasoning_effort: true` (OpenAI's, which most OpenAI-compatible servers accept). */
const DEFAULT_REASONING_EFFORTS = ["low", "medium", "high"];

/** Where the models come from: the validated file, its raw tree (for variable names), and the variables. */
export interface ModelSources {
  file: ConfigFile;
  raw: unknown;
  /** config.yaml as shown in messages; undefined without one. */
  shown: string | undefined;
  /** The process environment alone (what the user set for this run). */
  env: NodeJS.ProcessEnv;
  /** The environment over `.env`. */
  lookup: Record<string, string | undefined>;
  origin: VariableOrigin;
}

/** What {@link modelList} found. */
export interface ConfiguredModels {
  providers: Record<string, ProviderConfig>;
  models: ModelConfig[];
  /** The model new sessions start with (undefined when none is configured). */
  model: string | undefined;
  /** Context window of models that do not set one. */
  contextWindow: number;
  /** Which source won where config.yaml and the environment both name the provider or model. */
  notices: string[];
}

/** The providers, models and starting model of a configuration; a `ConfigError` names every bad entry. */
export function modelList(sources: ModelSources): ConfiguredModels {
  const { file, raw, shown, lookup, origin } = sources;
  const windowFromEnv = envInteger(lookup, "CROW_CONTEXT_WINDOW", 1);
  const window = { contextWindow: windowFromEnv ?? DEFAULT_CONTEXT_WINDOW, windowAssumed: windowFromEnv === undefined };
  const providers: Record<string, ProviderConfig> = fileProviders(file.providers, raw, shown ?? "", origin);
  let models: ModelConfig[];
  const fromFile = Object.keys(file.models ?? {}).length > 0;
  if (fromFile) models = fileModels(file, providers, window, shown as string);
  else {
    // No models in the file (or no file): the environment's provider and models, as before config files existed.
    const provider = envProvider(lookup, origin);
    if (provider && !providers[ENV_PROVIDER]) providers[ENV_PROVIDER] = provider;
    models = envModels(lookup, window.contextWindow, window.windowAssumed);
  }
  const { model, notices } = startingModel(sources, providers, models, fromFile, window);
  return { providers, models, model, contextWindow: window.contextWindow, notices };
}

/** config.yaml's `models`, each checked against the providers. */
function fileModels(
  file: ConfigFile,
  providers: Record<string, ProviderConfig>,
  window: { contextWindow: number; windowAssumed: boolean },
  shown: string,
): ModelConfig[] {
  const known = Object.keys(providers);
  const problems: string[] = [];
  const models: ModelConfig[] = [];
  for (const [name, entry] of Object.entries(file.models ?? {})) {
    if (!providers[entry.provider]) {
      const guess = closest(entry.provider, known);
      const list = known.length > 0 ? `known: ${known.join(", ")}` : "no providers are configured";
      problems.push(
        `models.${name}.provider: unknown provider "${entry.provider}" (${guess ? `did you mean "${guess}"? ` : ""}${list})`,
      );
    }
    const model: ModelConfig = {
      name,
      id: entry.model ?? name,
      provider: entry.provider,
      contextWindow: entry.context_window ?? window.contextWindow,
      ...(entry.context_window === undefined && window.windowAssumed ? { contextWindowAssumed: true as const } : {}),
    };
    const efforts = entry.reasoning_effort === true ? DEFAULT_REASONING_EFFORTS : entry.reasoning_effort;
    if (Array.isArray(efforts)) model.reasoningEfforts = [...new Set(efforts)];
    if (entry.max_tokens !== undefined) model.maxTokens = entry.max_tokens;
    if (entry.price) {
      model.price = {
        input: entry.price.input,
        output: entry.price.output,
        currency: entry.price.currency ?? "USD",
        ...(entry.price.cached_input !== undefined ? { cachedInput: entry.price.cached_input } : {}),
      };
    }
    models.push(model);
  }
  if (problems.length > 0) failIn(shown, problems);
  return models;
}

/** `default_model`, then the environment's say (an `OPENAI_BASE_URL` override, `CROW_MODEL`), with what it said. */
function startingModel(
  sources: ModelSources,
  providers: Record<string, ProviderConfig>,
  models: ModelConfig[],
  fromFile: boolean,
  window: { contextWindow: number; windowAssumed: boolean },
): { model: string | undefined; notices: string[] } {
  const { file, shown, env, lookup, origin } = sources;
  let model = models[0]?.name;
  if (file.default_model !== undefined) {
    if (!models.some((m) => m.name === file.default_model)) {
      failIn(shown as string, [
        `default_model: "${file.default_model}" is not one of models (${models.map((m) => m.name).join(", ") || "none configured"})`,
      ]);
    }
    model = file.default_model;
  }
  const notices: string[] = [];
  const override = fromFile
    ? environmentOverride(env, lookup, origin, providers, models, model, window, shown as string)
    : undefined;
  const wanted = fromFile && !override ? lookup.CROW_MODEL?.trim() : undefined;
  if (override) {
    model = override.model;
    notices.push(override.notice);
  } else if (wanted) {
    const found = models.find((m) => m.name === wanted) ?? models.find((m) => m.id === wanted);
    if (!found) {
      throw new ConfigError(
        `CROW_MODEL="${wanted}" is not a model of ${shown} (known: ${models.map((m) => m.name).join(", ")})`,
      );
    }
    if (found.name !== model && env.CROW_MODEL !== undefined) {
      notices.push(`CROW_MODEL is set in the environment: model "${found.name}" instead of "${model}" of ${shown}`);
    }
    model = found.name;
  }
  return { model, notices };
}
