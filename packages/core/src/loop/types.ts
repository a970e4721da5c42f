import type { HookError, LoopHooks, StopReason } from "../hooks/types.js";
import type { FinishReason, LlmClient, LlmError } from "../llm/types.js";
import type { AssistantMessage, ChatMessage, ToolMessage, ToolOutcome, Usage, UserMessage } from "../messages.js";
import type { ToolDisplay, ToolKind, ToolProgress, ToolResult, ToolSet } from "../tools.js";
import type { LoopSettings } from "./settings.js";

/** Everything the loop needs; it knows nothing else (no ACP, MCP, store). Its settings are in settings.ts. */
export interface LoopConfig extends LoopSettings {
  llm: LlmClient;
  model: string;
  tools: ToolSet;
  /** Hooks, usually `hookBus.loopHooks()`. Omitted: no hooks. */
  hooks?: LoopHooks;
  /** Cancels the turn: the stop reason is then always `cancelled`. */
  signal?: AbortSignal;
  /** Passed to hooks. */
  sessionId?: string;
  /**
   * Called synchronously as each message joins the history, in order (before its `message_appended` event). The loop
   * awaits it before running an assistant message's tool calls, so a host that persists here has the calls stored
   * before any tool acts: a crash mid-tool leaves them in the history. Errors are the host's to handle.
   */
  onAppend?: (message: AppendedMessage, usage?: Usage, outcome?: ToolOutcome) => void | Promise<void>;
  /** Messages the user adds while the turn runs (steering); none when omitted. */
  steering?: TurnInbox;
}

/** A message the loop appends to the history: the model's, a tool's result, or a steer taken from the inbox. */
export type AppendedMessage = AssistantMessage | ToolMessage | UserMessage;

/**
 * The user's messages for a running turn (steering). The loop takes what waits before each request, so a steer joins
 * the history after the running step's tool calls have all answered (never between a call and its result), and is
 * in the very next request. A turn that would end while something waits makes one more request instead. When the
 * loop stops it closes the inbox in the same tick as it decides to stop: a steer is either taken by this turn or
 * refused as arriving too late, never left behind.
 */
export interface TurnInbox {
  /** Whether messages wait. */
  waiting(): boolean;
  /** Every waiting message, in arrival order (they are the loop's from now on). */
  take(): UserMessage[];
  /** The turn takes no more: what still waits is dropped (the inbox says so to whoever sent it). */
  close(reason: StopReason): void;
}

/** One prompt turn's input: the whole history to send, ending with the new user message. It is not mutated. */
export interface LoopInput {
  messages: ChatMessage[];
}

/** A tool call as announced in events. */
export interface ToolCallInfo {
  id: string;
  name: string;
  kind: ToolKind;
  args: Record<string, unknown>;
  /** The argument text as the model sent it (before repair). */
  rawArguments: string;
  /** What a host shows of the call (title, locations), from the tool it resolved to. */
  display: ToolDisplay;
}

/** How a tool call ended. */
export type ToolCallStatus = "completed" | "failed" | "blocked" | "cancelled";

/**
 * The loop's only output, in order. Consumers (ACP translator, persistence, SDK users) switch on `type`.
 *
 * - `text_delta` / `reasoning_delta`: streamed output of the current request.
 * - `retry`: the current request failed and starts over: discard every delta since the last `request_start`/`retry`.
 * - `assistant_message`: the complete assistant message (what will be appended), with usage.
 * - `tool_call_pending` → `tool_call_running` → `tool_call_progress`* → `tool_call_done`, per call; calls of one
 *   message overlap. A call refused before running (unknown tool, bad args, blocked) goes pending → done.
 * - `message_appended`: a message was added to the history, in history order (assistant first, then its tool
 *   results in call order). Persist on this event and the stored history is always what the model saw.
 * - `hook_error`: a hook handler failed; the turn went on.
 * - `stop`: always last, exactly once.
 */
export type LoopEvent =
  /** `messageId`: the id of the assistant message this request produces (on its deltas' message and the stored one). */
  | { type: "request_start"; step: number; messageId: string }
  | { type: "text_delta"; text: string }
  | { type: "reasoning_delta"; text: string }
  | { type: "retry"; attempt: number; delayMs: number; error: LlmError }
  | { type: "assistant_message"; message: AssistantMessage; usage?: Usage; finishReason: FinishReason; step: number }
  | { type: "tool_call_pending"; call: ToolCallInfo }
  /** `args` are the arguments actually used (a hook may have rewritten them). */
  | { type: "tool_call_running"; id: string; args: Record<string, unknown> }
  | { type: "tool_call_progress"; id: string; progress: ToolProgress }
  | { type: "tool_call_done"; id: string; status: ToolCallStatus; result: ToolResult }
  /** A user message appended mid-turn is a steer (the turn's own prompt is not announced: the host sent it). */
  | { type: "message_appended"; message: AppendedMessage; usage?: Usage }
  | { type: "hook_error"; error: HookError }
  | {
      type: "stop";
      reason: StopReason;
      /** Messages appended during this turn (the same ones announced by `message_appended`). */
      messages: ChatMessage[];
      /** Usage summed over the turn's requests; `lastUsage` is the last request's (its prompt size). */
      usage?: Usage;
      lastUsage?: Usage;
      /** With reason `error`: the provider failure (its message is the provider's). */
      error?: LlmError;
    };

export type StopEvent = Extract<LoopEvent, { type: "stop" }>;
