/**
 * The environment's part of the configuration: the fallback provider and models (`OPENAI_BASE_URL`,
 * `OPENAI_API_KEY`, `CROW_MODEL`, `CROW_MODELS`) used when config.yaml defines no models, and the numeric overrides
 * (`CROW_MAX_STEPS`, `CROW_CONTEXT_WINDOW`, `CROW_MAX_RETRIES`, `CROW_RETRY_BASE_MS`) that win over the file.
 */
import { ConfigError } from "./errors.js";
import type { ModelConfig } from "./types.js";

export const OPENAI_BASE_URL = "https://api.openai.com/v1";

/** Name of the provider built from `OPENAI_BASE_URL` / `OPENAI_API_KEY`. */
export const ENV_PROVIDER = "default";

type Env = Readonly<Record<string, string | undefined>>;

/** A whole number ≥ min from variable `name`, undefined when unset. Throws `ConfigError` naming the variable. */
export function envInteger(env: Env, name: string, min: number): number | undefined {
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) {
    throw new ConfigError(`${name}="${raw}" is not valid: expected a whole number ≥ ${min}.`);
  }
  return value;
}

/** `CROW_MODEL` first, then the rest of `CROW_MODELS` (comma-separated), on the environment's provider. */
export function envModels(env: Env, contextWindow: number, assumed = false): ModelConfig[] {
  const listed = (env.CROW_MODELS ?? "")
    .split(",")
    .map((m) => m.trim())
    .filter((m) => m.length > 0);
  const first = env.CROW_MODEL?.trim() || listed[0];
  const names = first ? [first, ...listed.filter((m) => m !== first)] : [];
  return names.map((name) => ({
    name,
    id: name,
    provider: ENV_PROVIDER,
    contextWindow,
    ...(assumed ? { contextWindowAssumed: true as const } : {}),
  }));
}
