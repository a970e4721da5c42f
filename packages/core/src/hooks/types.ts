import type { FinishReason, LlmError, RequestParams } from "../llm/types.js";
import type { AssistantMessage, ChatMessage, ToolDefinition, ToolOutcome, Usage } from "../messages.js";
import type { ResolvedTool, ToolCallRequest, ToolKind, ToolResult } from "../tools.js";

/** Why a prompt turn ended (the ACP stop reasons, plus `error` which the ACP layer turns into a JSON-RPC error). */
export type StopReason = "end_turn" | "cancelled" | "max_tokens" | "max_turn_requests" | "refusal" | "error";

/** Context passed to every hook handler. */
export interface HookContext {
  sessionId?: string;
  /** Fires when the turn is cancelled; long-running handlers (permission prompts) should honour it. */
  signal: AbortSignal;
}

/** `session_start` (observe): a session was created or loaded. */
export interface SessionStartEvent {
  sessionId: string;
  cwd?: string;
  /** Whether an existing session was loaded/resumed rather than created. */
  resumed?: boolean;
}

/**
 * `before_request` (chained transform): the request about to be sent. Handlers return a new draft (or nothing to
 * keep it); changes apply to this request only, never to the stored history.
 */
export interface RequestDraft {
  model: string;
  messages: ChatMessage[];
  tools: ToolDefinition[];
  params: RequestParams;
  /** 1-based number of the LLM request within the turn. */
  step: number;
}

/** `after_response` (observe): a complete assistant message and its usage. */
export interface AfterResponseEvent {
  message: AssistantMessage;
  usage?: Usage;
  finishReason: FinishReason;
  step: number;
}

/** `before_tool_call` (gate): a call about to run. */
export interface BeforeToolCallEvent {
  call: ToolCallRequest;
  kind: ToolKind;
  /** The definition the name resolved to (tolerant matching). */
  definition: ToolDefinition;
  /** The tool itself, as the loop resolved it (its read-only claim, whether it runs confined, its proposal). */
  tool?: ResolvedTool;
}

/**
 * A gate's answer: block (first block wins, later handlers are skipped), rewrite the arguments (the next handler
 * sees the rewritten call), or nothing to let it through.
 */
export type ToolCallDecision = { block: true; reason: string } | { args: Record<string, unknown> } | undefined;

/** `after_tool_call` (chained transform): handlers may return a replacement result. */
export interface AfterToolCallEvent {
  call: ToolCallRequest;
  kind: ToolKind;
  result: ToolResult;
}

/**
 * `message` (observe): a message became part of the session's history — the user message when a turn starts, then
 * each message the loop appends (assistant, then its tool results in call order). The session awaits these
 * handlers in order, off the turn's critical path, and before the turn answers (persistence stores on it).
 */
export interface MessageEvent {
  message: ChatMessage;
  /** The completion's usage, on assistant messages. */
  usage?: Usage;
  /** How the call ended, on tool results. */
  outcome?: ToolOutcome;
}

/** `turn_end` (observe): the prompt turn is over. */
export interface TurnEndEvent {
  stopReason: StopReason;
  /** Messages appended during the turn (assistant and tool messages). */
  messages: ChatMessage[];
  usage?: Usage;
  error?: LlmError;
}

/**
 * `compacted` (chained transform): the history a compaction is about to put in place of the session's history
 * (`[first user, summary, last user, …]`), before it is stored. Handlers may return a replacement, e.g. to re-state
 * what the summary must not lose; it must keep every tool call next to its results, and the last user message and
 * what follows it as they are.
 */
export interface CompactedEvent {
  history: ChatMessage[];
  /** The assistant message holding the summary (an element of `history`). */
  summary: AssistantMessage;
  /** The messages the summary stands for (no longer in `history`). */
  summarized: readonly ChatMessage[];
}

/** `session_end` (observe): the session is closed or the process shuts down. */
export interface SessionEndEvent {
  sessionId: string;
}

type Awaitable<T> = T | Promise<T>;

/** Handler signatures per hook point. Semantics: observe (return ignored), chained transform, gate. */
export interface HookHandlers {
  session_start: (event: SessionStartEvent, ctx: HookContext) => Awaitable<void>;
  before_request: (draft: RequestDraft, ctx: HookContext) => Awaitable<RequestDraft | undefined>;
  after_response: (event: AfterResponseEvent, ctx: HookContext) => Awaitable<void>;
  before_tool_call: (event: BeforeToolCallEvent, ctx: HookContext) => Awaitable<ToolCallDecision>;
  after_tool_call: (event: AfterToolCallEvent, ctx: HookContext) => Awaitable<ToolResult | undefined>;
  message: (event: MessageEvent, ctx: HookContext) => Awaitable<void>;
  turn_end: (event: TurnEndEvent, ctx: HookContext) => Awaitable<void>;
  session_end: (event: SessionEndEvent, ctx: HookContext) => Awaitable<void>;
  compacted: (event: CompactedEvent, ctx: HookContext) => Awaitable<ChatMessage[] | undefined>;
}

export type HookPoint = keyof HookHandlers;

/** A handler that threw or rejected. The bus isolates it: the turn goes on as if the handler had returned nothing. */
export interface HookError {
  point: HookPoint;
  /** The name given at registration, or `<point>#<n>`. */
  handler: string;
  message: string;
  error: unknown;
}

/** Context the loop passes to its hooks: it also collects handler errors so the loop can emit them as events. */
export interface LoopHookContext extends HookContext {
  reportError: (error: HookError) => void;
}

/**
 * The hooks as the loop sees them (its only view of the hook bus; `HookBus.loopHooks()` builds one).
 * Implementations must not throw: errors are reported through `ctx.reportError`.
 */
export interface LoopHooks {
  beforeRequest(draft: RequestDraft, ctx: LoopHookContext): Promise<RequestDraft>;
  afterResponse(event: AfterResponseEvent, ctx: LoopHookContext): Promise<void>;
  beforeToolCall(event: BeforeToolCallEvent, ctx: LoopHookContext): Promise<ToolCallDecision>;
  afterToolCall(event: AfterToolCallEvent, ctx: LoopHookContext): Promise<ToolResult>;
  turnEnd(event: TurnEndEvent, ctx: LoopHookContext): Promise<void>;
}
