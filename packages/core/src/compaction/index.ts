/** Compaction: planning, the transcript and summarizer request, and the built-in extension that swaps histories. */
export * from "./compaction.js";
export * from "./plan.js";
export * from "./summarize.js";
export * from "./transcript.js";
