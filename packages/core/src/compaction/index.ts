/** Compaction: when (policy.ts), how (compaction.ts: planning, the transcript and summarizer request, the swap). */
export * from "./compaction.js";
export * from "./plan.js";
export * from "./policy.js";
export * from "./summarize.js";
export * from "./transcript.js";
