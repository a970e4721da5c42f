/**
 * Compaction settings from the configuration: the `MAX_COMPACT_TOKENS` a session is given. The rules, the fraction
 * of the context window and the default are core's (compaction/policy.ts); this file only says where the configured
 * value and the context window come from.
 */
import { compactionThreshold } from "@crow/core/internal";
import { findModel } from "./models.js";
import type { AgentConfig } from "./types.js";

export { COMPACT_FRACTION } from "@crow/core/internal";

/**
 * Prompt tokens above which a session of `model` is compacted: the configured `MAX_COMPACT_TOKENS` (config.yaml, else
 * `CROW_MAX_COMPACT_TOKENS`, both read by the loader), else core's default share of the model's context window when
 * one was given (`context_window`, `CROW_CONTEXT_WINDOW`; an assumed window does not count), else core's default.
 */
export function compactionThresholdOf(config: AgentConfig, model: string | undefined): number {
  const found = findModel(config, model);
  return compactionThreshold(
    config.maxCompactTokens,
    found && !found.contextWindowAssumed ? found.contextWindow : undefined,
  );
}
