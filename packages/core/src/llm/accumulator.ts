import type { AssistantMessage, Usage } from "../messages.js";
import { type Chunk, deltaPieces, type ToolCallFragment } from "./delta.js";
import { parseToolArguments } from "./json-repair.js";
import type { AssembledToolCall, FinishReason, LlmStreamEvent } from "./types.js";

/** An error object the provider sent inside the stream. */
export class StreamErrorPayload extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
  }
}

interface PartialToolCall {
  id: string;
  name: string;
  arguments: string;
}

const FINISH_REASONS: ReadonlySet<string> = new Set(["stop", "length", "tool_calls", "content_filter"]);

/**
 * Accumulates the chunks of one attempt: text and reasoning (in every shape `deltaPieces` reads), tool calls, usage,
 * finish reason. `push` returns false for a chunk that is not valid JSON (it is skipped).
 */
export class ChunkAccumulator {
  content = "";
  reasoning = "";
  usage: Usage | undefined;
  finishReason: string | undefined;
  /** The calls by slot: the provider's index when it sends one, else the order in which the calls started. */
  private readonly calls = new Map<number, PartialToolCall>();
  /** Provider index → slot (they differ only when a provider reuses an index for a second call). */
  private readonly slotOfIndex = new Map<number, number>();
  private lastSlot: number | undefined;

  constructor(private readonly emit: (event: LlmStreamEvent) => void) {}

  /** Feeds one SSE data payload. Throws `StreamErrorPayload` when the provider reports an error in the stream. */
  push(data: string): boolean {
    let chunk: Chunk;
    try {
      chunk = JSON.parse(data) as Chunk;
    } catch {
      return false;
    }
    if (typeof chunk !== "object" || chunk === null) return false;
    if (chunk.error) {
      const code = chunk.error.code === undefined ? undefined : String(chunk.error.code);
      throw new StreamErrorPayload(chunk.error.message ?? "the provider reported an error mid-stream", code);
    }
    if (chunk.usage) this.usage = toUsage(chunk.usage);
    // Azure's first chunk and OpenAI's usage chunk have no choice: nothing more to read.
    const choice = chunk.choices?.[0];
    if (!choice) return true;
    const delta = choice.delta;
    if (delta) {
      for (const piece of deltaPieces(delta)) {
        if (piece.kind === "reasoning") {
          this.reasoning += piece.text;
          this.emit({ type: "reasoning_delta", text: piece.text });
        } else {
          this.content += piece.text;
          this.emit({ type: "text_delta", text: piece.text });
        }
      }
      for (const fragment of delta.tool_calls ?? []) this.pushToolCall(fragment);
    }
    if (choice.finish_reason) this.finishReason = choice.finish_reason;
    return true;
  }

  private pushToolCall(fragment: ToolCallFragment): void {
    // An empty id (sent on later fragments by some providers) or name means "not sent".
    const id = fragment.id || undefined;
    const name = fragment.function?.name || undefined;
    const args = fragment.function?.arguments ?? "";
    const slot = this.slotOf(fragment, id, name);
    this.lastSlot = slot;
    let call = this.calls.get(slot);
    if (!call) {
      call = { id: "", name: "", arguments: "" };
      this.calls.set(slot, call);
    }
    if (id && !call.id) call.id = id;
    // Some providers repeat the full name on every fragment; others send it once. Never concatenate it.
    if (name && !call.name) call.name = name;
    call.arguments += args;
    const event: LlmStreamEvent = { type: "tool_call_delta", index: slot, argumentsDelta: args };
    if (id) event.id = id;
    if (name) event.name = name;
    this.emit(event);
  }

  /**
   * Which call a fragment belongs to. With an `index`, the call at that index, unless it already has another id (a
   * provider that numbers every call 0): then a new call. Without one (Gemini sends each call whole, unnumbered), a
   * known id continues its call, a new id or a name starts a call, and bare arguments continue the latest call.
   */
  private slotOf(fragment: ToolCallFragment, id: string | undefined, name: string | undefined): number {
    const next = () => (this.calls.size === 0 ? 0 : Math.max(...this.calls.keys()) + 1);
    if (typeof fragment.index === "number") {
      let slot = this.slotOfIndex.get(fragment.index);
      if (slot === undefined) slot = this.calls.has(fragment.index) ? next() : fragment.index;
      const current = this.calls.get(slot)?.id;
      if (id && current && current !== id) slot = next();
      this.slotOfIndex.set(fragment.index, slot);
      return slot;
    }
    if (id) {
      for (const [slot, call] of this.calls) if (call.id === id) return slot;
      return next();
    }
    if (name || this.lastSlot === undefined) return next();
    return this.lastSlot;
  }

  /** The finish reason in the client's vocabulary. */
  finish(): FinishReason {
    if (this.finishReason === undefined) return "unknown";
    return FINISH_REASONS.has(this.finishReason) ? (this.finishReason as FinishReason) : "unknown";
  }

  /** Assembles the tool calls in index order, repairing argument JSON. */
  toolCalls(): AssembledToolCall[] {
    return [...this.calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, call]) => {
        const id = call.id || `call_${Math.random().toString(36).slice(2, 14)}`;
        const parsed = parseToolArguments(call.arguments);
        if (!parsed.ok) {
          return {
            id,
            name: call.name,
            args: {},
            arguments: "{}",
            status: { kind: "invalid", original: call.arguments, error: parsed.error },
          };
        }
        return {
          id,
          name: call.name,
          args: parsed.value,
          arguments: parsed.text,
          status: parsed.repaired ? { kind: "repaired", original: call.arguments } : { kind: "ok" },
        };
      });
  }

  /** The assistant message to append. */
  message(toolCalls: AssembledToolCall[]): AssistantMessage {
    // `null` content only alongside tool calls: some providers reject an assistant message with neither.
    const content = this.content.length > 0 || toolCalls.length === 0 ? this.content : null;
    const message: AssistantMessage = { role: "assistant", content };
    if (this.reasoning.length > 0) message.reasoning_content = this.reasoning;
    if (toolCalls.length > 0) {
      message.tool_calls = toolCalls.map((c) => ({
        id: c.id,
        type: "function",
        function: { name: c.name, arguments: c.arguments },
      }));
    }
    return message;
  }
}

function toUsage(raw: NonNullable<Chunk["usage"]>): Usage {
  const promptTokens = raw.prompt_tokens ?? 0;
  const completionTokens = raw.completion_tokens ?? 0;
  const usage: Usage = {
    promptTokens,
    completionTokens,
    totalTokens: raw.total_tokens ?? promptTokens + completionTokens,
  };
  const cached = raw.prompt_tokens_details?.cached_tokens;
  const reasoning = raw.completion_tokens_details?.reasoning_tokens;
  if (typeof cached === "number") usage.cachedTokens = cached;
  if (typeof reasoning === "number") usage.reasoningTokens = reasoning;
  return usage;
}
