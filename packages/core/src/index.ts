/**
 * @crow/core: the agent runtime as a library, for SDK hosts and extension authors (docs/sdk.md, docs/extensions.md).
 * This entry is the public API, each name chosen: the runtime (`createRuntime`, `Crow`, `CrowSession`, their options
 * and events), the extension API and its hooks, tool sets, the LLM client and its types, chat messages, the store
 * (`openStore` and what it holds), permission rules, checkpoints' rewind types, the skills engine's documented
 * functions, the system prompt template, and the errors a host may catch. Everything else the agent needs of core
 * is `@crow/core/internal` (internal.ts): no promise is made about it.
 *
 * Core's folders, each importing only the ones before it (the `folderOrder` table of scripts/folder-order.mjs is the
 * truth): the leaves (chat messages, tool display and tool set interface, errorText, exists, redaction, home,
 * fs-beneath) → llm (OpenAI-compatible streaming client) → hooks (typed bus) → store (sessions and prompts on
 * SQLite/PostgreSQL) → prompt (system prompt templates) → skills → compaction → checkpoints → loop (ReAct turns, one
 * event union out; its settings) → api (the runtime's public types) → extensions (the extension API and the built-in
 * extensions) → runtime (createRuntime, sessions, turns).
 */
export type { PermissionAnswer, PermissionMode, PermissionRequest } from "./api/permissions.js";
export {
  type CommandInfo,
  type Crow,
  type CrowEvent,
  type CrowSession,
  type LoadSessionOptions,
  type MethodContext,
  type ModelInfo,
  type NewSessionOptions,
  type PlanEntry,
  type PromptOptions,
  type PromptPaths,
  type PromptResult,
  type PromptRun,
  RunIterationError,
  SessionBusyError,
  type SessionEvent,
  type SteerOutcome,
  type ToolSetFactory,
  type ToolSetRequest,
} from "./api/types.js";
export type {
  TitledChoice,
  UserAnswer,
  UserAnswerValue,
  UserAsker,
  UserForm,
  UserFormField,
  UserQuestion,
} from "./api/user-question.js";
export { RewindError } from "./checkpoints/rewind.js";
export type { CheckpointSettings, RewindPoint, RewindRequest, RewindResult, RewindScope } from "./checkpoints/types.js";
export type { CompactionEvent, CompactionReason, CompactionResult } from "./compaction/compact-history.js";
export { errorText } from "./error-text.js";
export {
  type CommandContext,
  type CommandRegistration,
  type Extension,
  type ExtensionAPI,
  type ExtensionHookContext,
  type ExtensionHookHandlers,
  type ExtensionSpec,
  type Logger,
  MethodError,
  type MethodHandler,
  type PromptArgsContext,
  type PromptArgsProvider,
  type ProviderContext,
  type ProviderFactory,
  type ToolExecuteContext,
  type ToolRegistration,
} from "./extensions/api.js";
export type { CompactResponse } from "./extensions/builtin.js";
export {
  type PermissionAction,
  type PermissionRule,
  PermissionRuleError,
  type PermissionRules,
} from "./extensions/permission-rules.js";
export { MAX_SUBAGENT_DEPTH } from "./extensions/subagent-run.js";
export type { SubagentResponse } from "./extensions/subagents.js";
export type {
  AfterResponseEvent,
  AfterToolCallEvent,
  BeforeToolCallEvent,
  CompactedEvent,
  HookContext,
  HookError,
  HookHandlers,
  HookPoint,
  LoopHookContext,
  LoopHooks,
  MessageEvent,
  RequestDraft,
  SessionEndEvent,
  SessionStartEvent,
  StopReason,
  ToolCallDecision,
  TurnEndEvent,
} from "./hooks/types.js";
export { createLlmClient } from "./llm/client.js";
export type {
  ArgumentsStatus,
  AssembledToolCall,
  FinishReason,
  LlmCallOptions,
  LlmClient,
  LlmClientOptions,
  LlmError,
  LlmErrorKind,
  LlmFailure,
  LlmRequest,
  LlmResult,
  LlmStreamEvent,
  LlmSuccess,
  RequestParams,
  RetryPolicy,
} from "./llm/types.js";
export type { LoopSettings } from "./loop/settings.js";
export type { AppendedMessage, LoopEvent, StopEvent, ToolCallInfo, ToolCallStatus } from "./loop/types.js";
export type {
  AssistantMessage,
  AudioPart,
  ChatMessage,
  ContentPart,
  ImagePart,
  SystemMessage,
  TextPart,
  ToolCall,
  ToolDefinition,
  ToolMessage,
  ToolOutcome,
  Usage,
  UserMessage,
} from "./messages.js";
export { COMPACT_METHOD, REWIND_METHOD, SUBAGENT_METHOD } from "./methods.js";
export { systemPromptArgs } from "./prompt/system-prompt.js";
export { type PromptArgs, PromptTemplateError, renderTemplate, SYSTEM_PROMPT_NAME } from "./prompt/template.js";
export { builtinPromptVersion } from "./prompt/versions.js";
export { createRuntime } from "./runtime/crow.js";
export { SessionLeaseError } from "./runtime/leases.js";
export type { RuntimeOptions, SystemPromptOption } from "./runtime/options.js";
export { InvalidDirectoryError } from "./runtime/workspace-roots.js";
export { type Embedder, type OpenAiEmbedderOptions, openAiEmbedder, type Vector } from "./skills/embedder.js";
export type { SkillMetadata } from "./skills/frontmatter.js";
export { loadSkills, type SkillRoot, type SkillRootsOptions, skillRoots } from "./skills/load.js";
export { createSkillIndex, type SkillIndex, type SkillIndexOptions } from "./skills/search.js";
export { checkSkillSpec, type SpecProblem, type SpecResult } from "./skills/spec.js";
export { type SkillTool, skillsHint, skillTools } from "./skills/tools.js";
export { matchTriggers, type TriggerMatch, triggerInjection } from "./skills/triggers.js";
export { isProjectTrusted, type TrustOptions, trustProject, untrustProject } from "./skills/trust.js";
export type { LoadedSkills, Skill, SkillHit, SkillProblem, SkillSearchResult } from "./skills/types.js";
export type { CheckpointFile, CheckpointRecord, CheckpointStore, NewCheckpoint } from "./store/checkpoint-types.js";
export type {
  EvalArtifact,
  EvalRunRecord,
  EvalStepDetails,
  EvalStore,
  EvalTrialDetails,
  EvalTrialRecord,
} from "./store/eval-types.js";
export type { LeaseHolder, LeaseStore, SessionLease } from "./store/lease-types.js";
export { type OpenStoreOptions, openStore } from "./store/open.js";
export {
  type CheckpointMove,
  DbUriError,
  type ForkOptions,
  type ListSessionsOptions,
  type MessageInput,
  type MessagePageOptions,
  type NewSession,
  type PromptRecord,
  type ReplaceOptions,
  SessionNotFoundError,
  type SessionPage,
  type SessionPatch,
  type SessionRecord,
  type SessionStats,
  type Store,
  StoreDriverError,
  type StoredMessage,
  type StoredToolDisplay,
  type StoredToolOutcome,
  StoreError,
  type StoreKind,
  StoreLocationError,
  type UsagePoint,
} from "./store/types.js";
export type { ToolDiagnostic, ToolDiagnostics, ToolDiff, ToolDisplay, ToolLocation } from "./tool-display.js";
export {
  callDisplay,
  type ExternalSkill,
  type ExternalSkills,
  type ResolvedTool,
  runToolCall,
  type ToolCallRequest,
  type ToolKind,
  type ToolProgress,
  type ToolResult,
  type ToolRunContext,
  type ToolSet,
  toolSetOf,
} from "./tools.js";
