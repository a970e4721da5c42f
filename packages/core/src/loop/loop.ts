import { randomUUID } from "node:crypto";
import { DEFAULT_KEEP_TOOL_RESULTS, shortenOldToolResults } from "../compaction/old-results.js";
import { errorText } from "../error-text.js";
import type { HookError, LoopHookContext, LoopHooks, StopReason } from "../hooks/types.js";
import type { AssembledToolCall, FinishReason, LlmError, LlmStreamEvent } from "../llm/types.js";
import {
  type AssistantMessage,
  addUsage,
  type ChatMessage,
  type ToolDefinition,
  type ToolMessage,
  type ToolOutcome,
  type Usage,
} from "../messages.js";
import { EventChannel } from "./channel.js";
import { DEFAULT_MAX_STEPS_PER_TURN } from "./settings.js";
import { runToolCalls } from "./tool-calls.js";
import type { AppendedMessage, LoopConfig, LoopEvent, LoopInput } from "./types.js";

/**
 * Runs one prompt turn: LLM request, the response's tool calls in parallel, repeat until the model stops calling
 * tools, `maxStepsPerTurn` requests were made, or `config.signal` aborts. Yields `LoopEvent`s; the last is `stop`.
 * Never throws. Breaking out of the iteration cancels the turn.
 *
 * Invariant on every exit: each appended assistant `tool_calls[i].id` has exactly one appended tool message.
 */
export function runLoop(input: LoopInput, config: LoopConfig): AsyncIterable<LoopEvent> {
  const controller = new AbortController();
  const cancel = () => controller.abort();
  if (config.signal?.aborted) cancel();
  config.signal?.addEventListener("abort", cancel, { once: true });
  const channel = new EventChannel<LoopEvent>(cancel);
  void driveLoop(input, { ...config, signal: controller.signal }, (event) => channel.push(event)).finally(() => {
    config.signal?.removeEventListener("abort", cancel);
    channel.close();
  });
  return channel;
}

/**
 * The same turn as {@link runLoop}, with each event handed to `emit` the moment it happens (no queue between the loop
 * and its consumer, so what a listener does on an event, e.g. send it to an editor, comes before whatever the loop
 * does next, e.g. ask a permission question about the call it just announced). Resolves after the `stop` event;
 * never rejects.
 */
export async function driveLoop(input: LoopInput, config: LoopConfig, emit: (event: LoopEvent) => void): Promise<void> {
  const signal = config.signal ?? new AbortController().signal;
  try {
    await loopSteps(input, config, signal, emit);
  } catch (error) {
    // Only a bug gets here (every dependency is wrapped); still end with a well-formed stop.
    const message = `internal error in the agent loop: ${errorText(error)}`;
    config.steering?.close("error");
    emit({
      type: "stop",
      reason: "error",
      messages: [],
      error: { kind: "invalid_response", message, retryable: false, attempts: 0 },
    });
  }
}

/** Hooks that can be trusted not to throw: a failing hook is reported and treated as a no-op. */
function safeHooks(hooks: LoopHooks | undefined): LoopHooks {
  const guard = async <T>(
    name: keyof LoopHooks,
    fallback: T,
    run: () => Promise<T> | undefined,
    ctx: LoopHookContext,
  ) => {
    try {
      return (await run()) ?? fallback;
    } catch (error) {
      const message = errorText(error);
      ctx.reportError({ point: POINTS[name], handler: `hooks.${name}`, message, error });
      return fallback;
    }
  };
  return {
    beforeRequest: (draft, ctx) => guard("beforeRequest", draft, () => hooks?.beforeRequest(draft, ctx), ctx),
    afterResponse: (event, ctx) => guard("afterResponse", undefined, () => hooks?.afterResponse(event, ctx), ctx),
    beforeToolCall: (event, ctx) => guard("beforeToolCall", undefined, () => hooks?.beforeToolCall(event, ctx), ctx),
    afterToolCall: (event, ctx) => guard("afterToolCall", event.result, () => hooks?.afterToolCall(event, ctx), ctx),
    turnEnd: (event, ctx) => guard("turnEnd", undefined, () => hooks?.turnEnd(event, ctx), ctx),
  };
}

const POINTS = {
  beforeRequest: "before_request",
  afterResponse: "after_response",
  beforeToolCall: "before_tool_call",
  afterToolCall: "after_tool_call",
  turnEnd: "turn_end",
} as const satisfies Record<keyof LoopHooks, HookError["point"]>;

/** What one turn has appended and used so far, and how it ends (the `turn_end` hooks, then the `stop` event). */
class TurnLog {
  readonly history: ChatMessage[];
  readonly appended: ChatMessage[] = [];
  private usage: Usage | undefined;
  private lastUsage: Usage | undefined;

  constructor(
    input: LoopInput,
    private readonly config: LoopConfig,
    private readonly signal: AbortSignal,
    private readonly hooks: LoopHooks,
    private readonly ctx: LoopHookContext,
    private readonly emit: (event: LoopEvent) => void,
  ) {
    this.history = [...input.messages];
  }

  /** Counts one request's usage (the turn's sum, and the last request's prompt size). */
  used(usage: Usage | undefined): void {
    this.usage = addUsage(this.usage, usage);
    this.lastUsage = usage ?? this.lastUsage;
  }

  /** Appends a message (host's `onAppend`, then `message_appended`); resolves when the host has recorded it. */
  append(message: AppendedMessage, messageUsage?: Usage, outcome?: ToolOutcome): Promise<void> {
    this.history.push(message);
    this.appended.push(message);
    let settled: Promise<void> = Promise.resolve();
    try {
      settled = Promise.resolve(this.config.onAppend?.(message, messageUsage, outcome)).catch(() => undefined);
    } catch {
      // The host's failure to record is its own business; the turn goes on.
    }
    this.emit(
      messageUsage ? { type: "message_appended", message, usage: messageUsage } : { type: "message_appended", message },
    );
    return settled;
  }

  async stop(reason: StopReason, error?: LlmError): Promise<void> {
    const { usage, lastUsage, appended } = this;
    // After a cancel the answer is `cancelled`, whatever else happened on the way out.
    const final: StopReason = this.signal.aborted ? "cancelled" : reason;
    const summary = { stopReason: final, messages: appended, ...(usage ? { usage } : {}), ...(error ? { error } : {}) };
    await this.hooks.turnEnd(summary, this.ctx);
    this.emit({
      type: "stop",
      reason: final,
      messages: appended,
      ...(usage ? { usage } : {}),
      ...(lastUsage ? { lastUsage } : {}),
      ...(error && final === "error" ? { error } : {}),
    });
  }
}

/** What one step's request gave: the appended answer and the tools it was offered, or why the turn stops. */
type StepAnswer =
  | { message: AssistantMessage; finishReason: FinishReason; toolCalls: AssembledToolCall[]; offered: ToolDefinition[] }
  | { stop: StopReason; error?: LlmError };

async function loopSteps(
  input: LoopInput,
  config: LoopConfig,
  signal: AbortSignal,
  emit: (event: LoopEvent) => void,
): Promise<void> {
  const hooks = safeHooks(config.hooks);
  const maxSteps = config.maxStepsPerTurn ?? DEFAULT_MAX_STEPS_PER_TURN;
  const ctx: LoopHookContext = {
    signal,
    reportError: (error) => emit({ type: "hook_error", error }),
    ...(config.sessionId === undefined ? {} : { sessionId: config.sessionId }),
  };
  const log = new TurnLog(input, config, signal, hooks, ctx, emit);
  const inbox = config.steering;
  // The inbox closes in the tick the loop decides to stop (before the turn_end hooks are awaited).
  const stop = (reason: StopReason, error?: LlmError) => {
    inbox?.close(signal.aborted ? "cancelled" : reason);
    return log.stop(reason, error);
  };

  for (let step = 1; ; step++) {
    if (signal.aborted) return stop("cancelled");
    // Steers join after the previous step's tool results, before this request.
    for (const steer of inbox?.take() ?? []) void log.append(steer);
    const answer = await requestStep(step, log, config, hooks, ctx, signal, emit);
    if ("stop" in answer) return stop(answer.stop, answer.error);
    const { finishReason, toolCalls } = answer;
    const truncated = finishReason === "length" || finishReason === "content_filter";
    if (toolCalls.length > 0) {
      const refuseAll = truncated
        ? "Error: not executed, the response was cut off before this call was complete. Make smaller calls."
        : undefined;
      const phase = {
        tools: config.tools,
        hooks,
        ctx,
        signal,
        emit,
        append: (tool: ToolMessage, outcome: ToolOutcome) => void log.append(tool, undefined, outcome),
      };
      await runToolCalls(toolCalls, answer.offered, phase, refuseAll);
    }
    if (signal.aborted) return stop("cancelled");
    if (finishReason === "length") return stop("max_tokens");
    if (finishReason === "content_filter") return stop("refusal");
    // A steer that arrived while the model answered gets its request: the turn is not over until it was seen.
    if (toolCalls.length === 0 && !inbox?.waiting()) return stop("end_turn");
    if (step >= maxSteps) return stop("max_turn_requests");
  }
}

/**
 * One step's request: the `before_request` hooks shape it, the response streams (deltas relayed), and the answer is
 * announced, passed to the `after_response` hooks and appended before any of its tool calls runs (write-ahead).
 */
async function requestStep(
  step: number,
  log: TurnLog,
  config: LoopConfig,
  hooks: LoopHooks,
  ctx: LoopHookContext,
  signal: AbortSignal,
  emit: (event: LoopEvent) => void,
): Promise<StepAnswer> {
  const draft = await hooks.beforeRequest(
    {
      model: config.model,
      messages: [...shortenOldToolResults(log.history, config.keepToolResults ?? DEFAULT_KEEP_TOOL_RESULTS)],
      tools: config.tools.definitions(),
      params: config.params ?? {},
      step,
    },
    ctx,
  );
  if (signal.aborted) return { stop: "cancelled" };
  const id = randomUUID();
  emit({ type: "request_start", step, messageId: id });
  const relay = (event: LlmStreamEvent) => {
    if (event.type === "text_delta" || event.type === "reasoning_delta" || event.type === "retry") emit(event);
  };
  const result = await config.llm.stream(
    { model: draft.model, messages: draft.messages, tools: draft.tools, params: draft.params },
    { signal, onEvent: relay },
  );
  if (!result.ok) {
    if (signal.aborted || result.error.kind === "aborted") {
      // Keep what the user already saw streaming; partial tool calls are dropped, so no result is owed.
      const { content, reasoning } = result.partial;
      if (content || reasoning) {
        void log.append(
          { role: "assistant", id, content, ...(reasoning ? { reasoning_content: reasoning } : {}) },
          result.usage,
        );
      }
      return { stop: "cancelled" };
    }
    return { stop: "error", error: result.error };
  }
  log.used(result.usage);
  const { finishReason, toolCalls } = result;
  const message = { ...result.message, id };
  emit({
    type: "assistant_message",
    message,
    finishReason,
    step,
    ...(result.usage ? { usage: result.usage } : {}),
  });
  await hooks.afterResponse({ message, finishReason, step, ...(result.usage ? { usage: result.usage } : {}) }, ctx);
  const empty = !message.content && !message.reasoning_content && toolCalls.length === 0;
  // Write-ahead: the host has the calls stored before any tool acts.
  if (!empty) await log.append(message, result.usage);
  return { message, finishReason, toolCalls, offered: draft.tools };
}
