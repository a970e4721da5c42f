/**
 * Compaction settings from the configuration: the threshold the runtime compares each request's prompt size with
 * (the turn-level policy and the mechanics are core's).
 */
import { findModel } from "./models.js";
import type { AgentConfig } from "./types.js";

/** Fraction of a configured context window at which compaction starts when `MAX_COMPACT_TOKENS` is not set. */
export const COMPACT_FRACTION = 0.8;

/**
 * Prompt tokens above which a session of `model` is compacted: config.yaml's `MAX_COMPACT_TOKENS`, else
 * `CROW_MAX_COMPACT_TOKENS` from the environment, else 80 % of the model's context window however it was given
 * (`context_window`, `CROW_CONTEXT_WINDOW`), else 120 000.
 */
export function compactionThresholdOf(
  config: AgentConfig,
  model: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): number {
  if (config.maxCompactTokens !== undefined) return config.maxCompactTokens;
  const fromEnv = Number.parseInt(env.CROW_MAX_COMPACT_TOKENS ?? "", 10);
  if (Number.isInteger(fromEnv) && fromEnv > 0) return fromEnv;
  const found = findModel(config, model);
  if (found && !found.contextWindowAssumed) return Math.floor(found.contextWindow * COMPACT_FRACTION);
  return 120_000;
}
