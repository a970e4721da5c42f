/**
 * The session side of compaction and `/clear`: the threshold from the configuration, and the turn-level policy the
 * Session applies (compact before a turn when the last request was over the threshold; compact and retry once when
 * the provider says the context is too long). The mechanics are core's `Compaction`.
 */
import type { CompactionEvent, CompactionStore, LlmError } from "@crow/core";
import { type AgentConfig, compactThreshold } from "../config/index.js";

/** What a session needs to compact and clear: where histories are swapped, and who hears about it. */
export interface SessionCompactionOptions {
  /** The store (compaction and `/clear` swap the history there, archiving the old one). */
  store?: CompactionStore;
  /** Progress of every compaction of this session (the ACP layer tells the client). */
  onEvent?: (event: CompactionEvent) => void;
}

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

/** Whether a turn that failed with `error` is worth one retry after a compaction. */
export function isContextOverflow(error: LlmError | undefined): boolean {
  return error?.kind === "context_length_exceeded";
}

/** The `/compact` answer for a compaction's outcome. */
export function compactedText(before: number, after: number, archiveId: string | undefined): string {
  const archived = archiveId ? ` The full history is archived as ${archiveId}.` : "";
  return `Compacted the conversation: ${before} messages → ${after} (first message, summary, latest request).${archived}`;
}
