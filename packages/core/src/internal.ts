/**
 * @crow/core/internal: what the agent (and Crow's own tests and benchmarks) use of core beyond its public API
 * (index.ts): the compaction rules, the store's helpers, the prompt's parts, the permission rules' parser, the
 * file operations beneath a directory, the hook bus, the loop itself… Not for SDK hosts or extensions: these names
 * change with core. A name is in one entry only; one that becomes public moves to index.ts.
 */
export { askThrough, canAsk } from "./api/user-question.js";
export { collectCheckpoints, type GcReport } from "./checkpoints/gc.js";
export { findGit, type GitProgram, ShadowGitError } from "./checkpoints/git.js";
export { checkpointPatch } from "./checkpoints/patch.js";
export { shadowGitDir } from "./checkpoints/shadow-repo.js";
export {
  type CompactHistoryOptions,
  type CompactionStore,
  type CompactRequest,
  compactHistory,
} from "./compaction/compact-history.js";
export { BATCH_CHARS, DEFAULT_KEEP_TOOL_RESULTS, shortenOldToolResults } from "./compaction/old-results.js";
export {
  type CompactionPlan,
  compactedHistory,
  type NothingToCompact,
  nothingToCompactMessage,
  planCompaction,
  summaryMessage,
} from "./compaction/plan.js";
export {
  COMPACT_FRACTION,
  Compaction,
  type CompactionOptions,
  compactionThreshold,
  DEFAULT_MAX_COMPACT_TOKENS,
  retriesAfterCompaction,
  SessionCompactions,
  storedPromptTokens,
  type ThresholdOption,
  thresholdFor,
  watchPromptSize,
} from "./compaction/policy.js";
export {
  CompactionError,
  SUMMARIZER_INSTRUCTIONS,
  type SummarizeOptions,
  type Summary,
  summarize,
  summarizerMessages,
  summarizerPrompt,
} from "./compaction/summarize.js";
export { clip, renderTranscript, summaryText, type TranscriptOptions } from "./compaction/transcript.js";
export { ASK_USER_TOOL } from "./extensions/ask-user.js";
export { compactedText, titleFrom } from "./extensions/builtin.js";
export { parseRewindArgs } from "./extensions/checkpoints.js";
export { type DoomLoopOptions, doomLoopGuard, installDoomLoopGuard } from "./extensions/doom-loop.js";
export {
  commandParts,
  compilePermissionRules,
  matchPermissionRule,
  normalizeCommand,
  parsePermissionRule,
  ruleMatches,
} from "./extensions/permission-rules.js";
export {
  installPermissions,
  type PermissionGate,
  type PermissionOptions,
  type Permissions,
  permissionGate,
} from "./extensions/permissions.js";
export { toolDefinition, toolParameters } from "./extensions/session-tool-set.js";
export type { SubagentOutcome } from "./extensions/subagent-run.js";
export { SUBAGENT_NOTE } from "./extensions/subagents.js";
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
export { crowHome, expandTilde, homeDir } from "./home.js";
export { HookBus, type HookBusOptions, type ObservePoint } from "./hooks/bus.js";
export { callArguments, type ParsedArguments, parseToolArguments, repairJson } from "./llm/json-repair.js";
export { driveLoop, runLoop } from "./loop/loop.js";
export { DEFAULT_MAX_STEPS_PER_TURN, loopSettings } from "./loop/settings.js";
export type { LoopConfig, LoopInput, TurnInbox } from "./loop/types.js";
export { addUsage, contentText, MISSING_TOOL_RESULT, repairToolPairs } from "./messages.js";
export { type IgnoreRule, isIgnored, parseGitignore } from "./prompt/gitignore.js";
export {
  AGENTS_MD_MAX_CHARS,
  directoriesArg,
  loadSystemTemplate,
  NO_AGENTS_MD,
  OVERRIDE_FILES,
  type PreparedSystemPrompt,
  type PrepareOptions,
  type PromptArgsOptions,
  type PromptStore,
  prepareSystemPrompt,
  readAgentsMd,
  reproduceSystemPrompt,
  type SystemTemplate,
} from "./prompt/system-prompt.js";
export { DEFAULT_SYSTEM_PROMPT } from "./prompt/template.js";
export { DEFAULT_TREE_IGNORE, type DirectoryTree, directoryTree, type TreeOptions } from "./prompt/tree.js";
export {
  BUILTIN_PROMPT_VERSIONS,
  FULL_TOOL_TEXTS_MARKER,
  usesFullToolTexts,
  withFullToolTexts,
} from "./prompt/versions.js";
export { clientSecrets, MIN_SECRET_LENGTH, REDACTED, redactSecrets } from "./redact.js";
export { parseSlashCommand } from "./runtime/commands.js";
export { LEASE_TTL_MS } from "./runtime/leases.js";
export { stderrLogger } from "./runtime/logger.js";
export { defaultSystemPrompt } from "./runtime/system-prompt.js";
export { checkAdditionalDirectories } from "./runtime/workspace-roots.js";
export {
  defaultSkillCacheDir,
  SkillEmbeddingCache,
  type SkillEmbeddingStore,
  type SkillVectors,
} from "./skills/cache.js";
export { CHUNKER_VERSION, chunkSkill } from "./skills/dense.js";
export { externalSkill, loadedSkill } from "./skills/external.js";
export { nameProblem, normaliseSkillName, type ParsedSkill, parseSkill } from "./skills/frontmatter.js";
export { projectSkillRoots, userSkillRoots } from "./skills/load.js";
export { loadSessionSkills, type SessionSkills, type SessionSkillsOptions } from "./skills/session-load.js";
export { MAX_COMPATIBILITY } from "./skills/spec.js";
export { formatSkillHits, skillDetails } from "./skills/tools.js";
export { triggerPattern } from "./skills/triggers.js";
export { projectRoot, trustedProjects, trustStorePath } from "./skills/trust.js";
export { MAX_DESCRIPTION, MAX_NAME } from "./skills/types.js";
export { promptHash } from "./store/checkpoints.js";
export { sessionSlug } from "./store/ids.js";
export { MIGRATIONS } from "./store/migrations.js";
export { type SqliteDriverName, sqliteDriverName } from "./store/node-sqlite.js";
export { openTarget } from "./store/open.js";
export { AmbiguousSessionIdError, resolveSessionId } from "./store/resolve.js";
export { type DbTarget, defaultDbUri, parseDbUri, redactUri } from "./store/uri.js";
export { compactSchema } from "./tool-schema.js";
export { callLocations, callTitle, filePathArg, findTool, isMutatingKind, toolKind } from "./tools.js";
