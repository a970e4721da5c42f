/**
 * Compaction settings from the configuration: the threshold the runtime compares each request's prompt size with
 * (the turn-level policy and the mechanics are core's), and the text that reports a compaction.
 */
import { type AgentConfig, compactThreshold } from "./index.js";

/**
 * The session's `MAX_COMPACT_TOKENS` for `model`: config.yaml's value, else `CROW_MAX_COMPACT_TOKENS` from the
 * environment, else 80 % of the model's configured context window, else 120 000.
 */
export function compactionThresholdOf(
  config: AgentConfig,
  model: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): number {
  if (config.maxCompactTokens === undefined) {
    const fromEnv = Number.parseInt(env.CROW_MAX_COMPACT_TOKENS ?? "", 10);
    if (Number.isInteger(fromEnv) && fromEnv > 0) return fromEnv;
  }
  return compactThreshold(config, model);
}

/** The `/compact` answer for a compaction's outcome. */
export function compactedText(before: number, after: number, archiveId: string | undefined): string {
  const archived = archiveId ? ` The full history is archived as ${archiveId}.` : "";
  return `Compacted the conversation: ${before} messages → ${after} (first message, summary, latest request).${archived}`;
}
