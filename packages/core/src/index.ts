/**
 * @crow/core: the agent runtime as a library. Its folders, each importing only the ones before it (the `folderOrder`
 * table of scripts/check-layers.mjs is the truth): the leaves (chat messages, tool display and tool set interface,
 * deadline, errorText, exists, redaction, home, fs-beneath) → llm (OpenAI-compatible streaming client) → hooks
 * (typed bus) → store (sessions and prompts on SQLite/PostgreSQL) → prompt (system prompt templates) → skills →
 * compaction → checkpoints → loop (ReAct turns, one event union out; its settings) → api (the runtime's public types) →
 * extensions (the extension API and the built-in extensions) → runtime (createRuntime, sessions, turns).
 */
export type * from "./api/permissions.js";
export * from "./api/types.js";
export * from "./api/user-question.js";
export { collectCheckpoints, type GcReport } from "./checkpoints/gc.js";
export { findGit, type GitProgram, ShadowGitError } from "./checkpoints/git.js";
export { checkpointPatch } from "./checkpoints/patch.js";
export { promptHash, RewindError } from "./checkpoints/rewind.js";
export { shadowGitDir } from "./checkpoints/shadow-repo.js";
export type * from "./checkpoints/types.js";
export * from "./compaction/index.js";
export { errorText } from "./error-text.js";
export * from "./extensions/api.js";
export { ASK_USER_TOOL } from "./extensions/ask-user.js";
export {
  COMPACT_METHOD,
  type CompactResponse,
  compactedText,
  titleFrom,
} from "./extensions/builtin.js";
export { parseRewindArgs, REWIND_METHOD } from "./extensions/checkpoints.js";
export * from "./extensions/doom-loop.js";
export * from "./extensions/permission-rules.js";
export * from "./extensions/permissions.js";
export { toolDefinition, toolParameters } from "./extensions/session-tool-set.js";
export { MAX_SUBAGENT_DEPTH, type SubagentOutcome } from "./extensions/subagent-run.js";
export { SUBAGENT_METHOD, SUBAGENT_NOTE, type SubagentResponse } from "./extensions/subagents.js";
export { planFromHistory, planText, TODO_TOOL } from "./extensions/todo.js";
export {
  BeneathDir,
  type InsideRead,
  inDirBeneath,
  putBeneath,
  readInside,
  removeBeneath,
  removeTreeAt,
} from "./fs-beneath.js";
export { expandTilde, homeDir } from "./home.js";
export * from "./hooks/bus.js";
export type * from "./hooks/types.js";
export * from "./llm/client.js";
export * from "./llm/json-repair.js";
export type * from "./llm/types.js";
export * from "./loop/loop.js";
export * from "./loop/settings.js";
export type * from "./loop/types.js";
export * from "./messages.js";
export * from "./prompt/index.js";
export * from "./redact.js";
export * from "./runtime/index.js";
export * from "./skills/index.js";
export * from "./store/index.js";
export { compactSchema } from "./tool-schema.js";
export * from "./tools.js";
