import type { AssistantMessage, Usage } from "../messages.js";
import { parseToolArguments } from "./json-repair.js";
import type { AssembledToolCall, FinishReason, LlmStreamEvent } from "./types.js";

/** The parts of a chat-completion chunk this client reads (providers vary; everything is optional). */
interface ChunkDelta {
  content?: string | null;
  reasoning_content?: string | null;
  reasoning?: string | null;
  tool_calls?: Array<{
    index?: number;
    id?: string | null;
    function?: { name?: string | null; arguments?: string | null } | null;
  }> | null;
}

interface Chunk {
  choices?: Array<{ index?: number; delta?: ChunkDelta | null; finish_reason?: string | null }> | null;
  usage?: {
    prompt_tokens?: number;
    completion_tokens?: number;
    total_tokens?: number;
    prompt_tokens_details?: { cached_tokens?: number } | null;
    completion_tokens_details?: { reasoning_tokens?: number } | null;
  } | null;
  error?: { message?: string; code?: string | number; type?: string } | null;
}

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
 * Accumulates the chunks of one attempt: content, reasoning (both field names), tool calls by index, usage,
 * finish reason. `push` returns false for a chunk that is not valid JSON (it is skipped).
 */
export class ChunkAccumulator {
  content = "";
  reasoning = "";
  usage: Usage | undefined;
  finishReason: string | undefined;
  private readonly calls = new Map<number, PartialToolCall>();

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
    const choice = chunk.choices?.[0];
    if (!choice) return true;
    const delta = choice.delta;
    if (delta) {
      // Both reasoning field names are read, and content is read independently of them (upstream dropped it).
      const reasoning = delta.reasoning_content ?? delta.reasoning;
      if (typeof reasoning === "string" && reasoning.length > 0) {
        this.reasoning += reasoning;
        this.emit({ type: "reasoning_delta", text: reasoning });
      }
      if (typeof delta.content === "string" && delta.content.length > 0) {
        this.content += delta.content;
        this.emit({ type: "text_delta", text: delta.content });
      }
      for (const [position, fragment] of (delta.tool_calls ?? []).entries()) this.pushToolCall(fragment, position);
    }
    if (choice.finish_reason) this.finishReason = choice.finish_reason;
    return true;
  }

  private pushToolCall(fragment: NonNullable<ChunkDelta["tool_calls"]>[number], position: number): void {
    const index = fragment.index ?? position;
    let call = this.calls.get(index);
    if (!call) {
      call = { id: "", name: "", arguments: "" };
      this.calls.set(index, call);
    }
    const id = fragment.id ?? undefined;
    const name = fragment.function?.name ?? undefined;
    const args = fragment.function?.arguments ?? "";
    if (id && !call.id) call.id = id;
    // Some providers repeat the full name on every fragment; others send it once. Never concatenate it.
    if (name && !call.name) call.name = name;
    call.arguments += args;
    const event: LlmStreamEvent = { type: "tool_call_delta", index, argumentsDelta: args };
    if (id) event.id = id;
    if (name) event.name = name;
    this.emit(event);
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
