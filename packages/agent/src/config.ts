import type { RetryPolicy } from "@crow/core";

/**
 * The agent's configuration. For now it comes only from environment variables; the config issue replaces
 * `loadConfig` with `~/.crow/config.yaml` + `.env` and keeps this shape.
 */
export interface AgentConfig {
  /** OpenAI-compatible base URL (`OPENAI_BASE_URL`); defaults to OpenAI's when only an API key is set. */
  baseURL?: string;
  /** `OPENAI_API_KEY`. Local servers accept anything. */
  apiKey?: string;
  /** Default model (`CROW_MODEL`, else the first of `models`). */
  model?: string;
  /** Models offered in the model select (`CROW_MODELS`, comma-separated; the default model is always included). */
  models: string[];
  /** LLM requests per prompt turn (`CROW_MAX_STEPS`, default 100). */
  maxStepsPerTurn: number;
  /** Context window reported as `usage_update.size` (`CROW_CONTEXT_WINDOW`, default 128 000 tokens). */
  contextWindow: number;
  /** Retry policy of the LLM client (`CROW_MAX_RETRIES`, `CROW_RETRY_BASE_MS`; core defaults otherwise). */
  retry: RetryPolicy;
}

export const OPENAI_BASE_URL = "https://api.openai.com/v1";

/** Thrown for an unusable setting; the message names the variable and what was expected. */
export class ConfigError extends Error {}

function integer(env: NodeJS.ProcessEnv, name: string, min: number): number | undefined {
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) {
    throw new ConfigError(`${name}="${raw}" is not valid: expected a whole number ≥ ${min}.`);
  }
  return value;
}

/** Reads the configuration from the environment. Throws `ConfigError` on malformed numbers. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): AgentConfig {
  const listed = (env.CROW_MODELS ?? "")
    .split(",")
    .map((m) => m.trim())
    .filter((m) => m.length > 0);
  const model = env.CROW_MODEL?.trim() || listed[0];
  const models = model && !listed.includes(model) ? [model, ...listed] : listed;
  const apiKey = env.OPENAI_API_KEY?.trim() || undefined;
  const baseURL = env.OPENAI_BASE_URL?.trim() || (apiKey ? OPENAI_BASE_URL : undefined);
  const retry: RetryPolicy = {};
  const maxRetries = integer(env, "CROW_MAX_RETRIES", 0);
  const baseDelayMs = integer(env, "CROW_RETRY_BASE_MS", 0);
  if (maxRetries !== undefined) retry.maxRetries = maxRetries;
  if (baseDelayMs !== undefined) retry.baseDelayMs = baseDelayMs;
  return {
    ...(baseURL ? { baseURL } : {}),
    ...(apiKey ? { apiKey } : {}),
    ...(model ? { model } : {}),
    models,
    maxStepsPerTurn: integer(env, "CROW_MAX_STEPS", 1) ?? 100,
    contextWindow: integer(env, "CROW_CONTEXT_WINDOW", 1) ?? 128_000,
    retry,
  };
}

/** Why a prompt cannot reach a model with this configuration, or undefined when it can. */
export function providerProblem(config: AgentConfig, model: string | undefined): string | undefined {
  if (!config.baseURL) {
    return "No LLM provider configured: set OPENAI_BASE_URL (e.g. http://127.0.0.1:11434/v1) and, if it needs one, OPENAI_API_KEY.";
  }
  if (!model) return "No model configured: set CROW_MODEL (or CROW_MODELS, a comma-separated list).";
  return undefined;
}
