import { errorText } from "../error-text.js";
import type { ChatMessage } from "../messages.js";
import type { ToolResult } from "../tools.js";
import type {
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
  ToolCallDecision,
  TurnEndEvent,
} from "./types.js";

interface Registration<P extends HookPoint> {
  name: string;
  handler: HookHandlers[P];
}

type Registry = { [P in HookPoint]: Registration<P>[] };

/** Options of a `HookBus`. */
export interface HookBusOptions {
  /** Called for every handler failure (in addition to the per-call `reportError` of loop contexts). */
  onError?: (error: HookError) => void;
}

/** The observe points: handlers run in registration order, return values are ignored. */
export type ObservePoint = "session_start" | "after_response" | "message" | "turn_end" | "session_end";

interface ObserveEvents {
  session_start: SessionStartEvent;
  after_response: AfterResponseEvent;
  message: MessageEvent;
  turn_end: TurnEndEvent;
  session_end: SessionEndEvent;
}

/**
 * A typed hook bus (DESIGN.md §5). Semantics per point:
 * - observe (`session_start`, `after_response`, `message`, `turn_end`, `session_end`): every handler runs, in order.
 * - chained transform (`before_request`, `after_tool_call`, `compacted`): each handler receives the previous one's output;
 *   returning nothing keeps the value. Handlers should return new objects rather than mutate.
 * - gate (`before_tool_call`): the first `{block}` wins and stops the chain; `{args}` rewrites the call for the
 *   handlers after it and for the execution.
 * A handler that throws or rejects is isolated: it is reported (`onError`, `ctx.reportError`) and treated as if it
 * had returned nothing. Handlers run sequentially, so a slow handler delays the point it is registered on.
 */
export class HookBus {
  private readonly registry: Registry = {
    session_start: [],
    before_request: [],
    after_response: [],
    before_tool_call: [],
    after_tool_call: [],
    message: [],
    turn_end: [],
    session_end: [],
    compacted: [],
  };
  private counter = 0;

  constructor(private readonly options: HookBusOptions = {}) {}

  /** Registers a handler; returns a function that unregisters it. */
  on<P extends HookPoint>(point: P, handler: HookHandlers[P], options: { name?: string } = {}): () => void {
    const registration: Registration<P> = { name: options.name ?? `${point}#${++this.counter}`, handler };
    const list = this.registry[point] as Registration<P>[];
    list.push(registration);
    return () => {
      const at = list.indexOf(registration);
      if (at >= 0) list.splice(at, 1);
    };
  }

  /** Number of handlers on a point. */
  count(point: HookPoint): number {
    return this.registry[point].length;
  }

  /** Runs the observe handlers of `point`. Never throws. */
  async emit<P extends ObservePoint>(
    point: P,
    event: ObserveEvents[P],
    ctx: HookContext | LoopHookContext,
  ): Promise<void> {
    for (const { name, handler } of [...this.registry[point]] as Registration<P>[]) {
      try {
        await (handler as (e: ObserveEvents[P], c: HookContext) => unknown)(event, ctx);
      } catch (error) {
        this.report(point, name, error, ctx);
      }
    }
  }

  /** Chains the `before_request` transforms. Never throws. */
  async transformRequest(draft: RequestDraft, ctx: HookContext | LoopHookContext): Promise<RequestDraft> {
    let value = draft;
    for (const { name, handler } of [...this.registry.before_request]) {
      try {
        value = (await handler(value, ctx)) ?? value;
      } catch (error) {
        this.report("before_request", name, error, ctx);
      }
    }
    return value;
  }

  /** Runs the `before_tool_call` gate. Never throws. */
  async gateToolCall(event: BeforeToolCallEvent, ctx: HookContext | LoopHookContext): Promise<ToolCallDecision> {
    let current = event;
    let rewritten = false;
    for (const { name, handler } of [...this.registry.before_tool_call]) {
      try {
        const decision = await handler(current, ctx);
        if (!decision) continue;
        if ("block" in decision) return { block: true, reason: decision.reason };
        current = { ...current, call: { ...current.call, args: decision.args } };
        rewritten = true;
      } catch (error) {
        this.report("before_tool_call", name, error, ctx);
      }
    }
    return rewritten ? { args: current.call.args } : undefined;
  }

  /** Chains the `after_tool_call` transforms. Never throws. */
  async transformToolResult(event: AfterToolCallEvent, ctx: HookContext | LoopHookContext): Promise<ToolResult> {
    let result = event.result;
    for (const { name, handler } of [...this.registry.after_tool_call]) {
      try {
        result = (await handler({ ...event, result }, ctx)) ?? result;
      } catch (error) {
        this.report("after_tool_call", name, error, ctx);
      }
    }
    return result;
  }

  /** Chains the `compacted` transforms over a compaction's new history. Never throws. */
  async transformCompacted(event: CompactedEvent, ctx: HookContext): Promise<ChatMessage[]> {
    let history = event.history;
    for (const { name, handler } of [...this.registry.compacted]) {
      try {
        history = (await handler({ ...event, history }, ctx)) ?? history;
      } catch (error) {
        this.report("compacted", name, error, ctx);
      }
    }
    return history;
  }

  /** The view of this bus that the loop gets through its config. */
  loopHooks(): LoopHooks {
    return {
      beforeRequest: (draft, ctx) => this.transformRequest(draft, ctx),
      afterResponse: (event, ctx) => this.emit("after_response", event, ctx),
      beforeToolCall: (event, ctx) => this.gateToolCall(event, ctx),
      afterToolCall: (event, ctx) => this.transformToolResult(event, ctx),
      turnEnd: (event, ctx) => this.emit("turn_end", event, ctx),
    };
  }

  private report(point: HookPoint, handler: string, error: unknown, ctx: HookContext | LoopHookContext): void {
    const hookError: HookError = {
      point,
      handler,
      message: errorText(error),
      error,
    };
    for (const sink of [this.options.onError, "reportError" in ctx ? ctx.reportError : undefined]) {
      try {
        sink?.(hookError);
      } catch {
        // A failing error sink must not break the turn either.
      }
    }
  }
}
