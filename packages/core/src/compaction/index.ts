/**
 * Compaction: when (policy.ts), how (compact-history.ts: planning, the transcript and summarizer request, the swap); and
 * before it is needed, old tool results sent shortened (old-results.ts).
 */
export * from "./compact-history.js";
export { BATCH_CHARS, DEFAULT_KEEP_TOOL_RESULTS, shortenOldToolResults } from "./old-results.js";
export * from "./plan.js";
export * from "./policy.js";
export * from "./summarize.js";
export * from "./transcript.js";
