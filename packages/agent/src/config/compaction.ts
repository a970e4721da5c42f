/**
 * Compaction settings from the configuration: the `MAX_COMPACT_TOKENS` a session is given. The rules, the fraction
 * of the context window and the default are core's (compaction/policy.ts); this file only says where the configured
 * value and the context window come from.
 */
import { compactionThreshold } from "@crow/core";
import { findModel } from "./models.js";
import type { AgentConfig } from "./types.js";

export { COMPACT_FRACTION } from "@crow/core";

/**
 * Prompt tokens above which a session of `model` is compacted: config.yaml's `MAX_COMPACT_TOKENS`, else
 * `CROW_MAX_COMPACT_TOKENS` from the environment, else core's default share of the model's context window when one
 * was given (`context_window`, `CROW_CONTEXT_WINDOW`; an assumed window does not count), else core's default.
 */
export function compactionThresholdOf(
  config: AgentConfig,
  model: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): number {
  const fromEnv = Number.parseInt(env.CROW_MAX_COMPACT_TOKENS ?? "", 10);
  const configured = config.maxCompactTokens ?? (Number.isInteger(fromEnv) && fromEnv > 0 ? fromEnv : undefined);
  const found = findModel(config, model);
  return compactionThreshold(configured, found && !found.contextWindowAssumed ? found.contextWindow : undefined);
}
