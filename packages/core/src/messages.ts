/**
 * The conversation model shared by every layer: OpenAI chat-completions messages, as stored and as sent.
 * Structurally compatible with the `openai` package's request types, but owned here so the loop, the store and the
 * ACP layer do not depend on the SDK's type churn. A stored history is a `ChatMessage[]` serialised as JSON.
 */
import type { ToolDisplay } from "./tool-display.js";

/** A text part of a multi-part content array. */
export interface TextPart {
  type: "text";
  text: string;
}

/** An image part (data: URL or http(s) URL). */
export interface ImagePart {
  type: "image_url";
  image_url: { url: string; detail?: "auto" | "low" | "high" };
}

/** An audio part (base64). Only models with audio input accept it. */
export interface AudioPart {
  type: "input_audio";
  input_audio: { data: string; format: "wav" | "mp3" };
}

export type ContentPart = TextPart | ImagePart | AudioPart;

export interface SystemMessage {
  role: "system";
  content: string;
}

export interface UserMessage {
  role: "user";
  content: string | ContentPart[];
  /** See {@link AssistantMessage.id}. Minted by the runtime for each prompt. */
  id?: string;
  /**
   * The content as the host received it, before it became `content` (the ACP layer keeps a prompt's resource blocks
   * here so a loaded session shows them again). Stored with the message, never sent to the model.
   */
  original?: unknown;
}

/** One function call requested by the model. `arguments` is a JSON object text (repaired when it was malformed). */
export interface ToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

export interface AssistantMessage {
  role: "assistant";
  /** Visible text; `null` when the message only carries tool calls. */
  content: string | null;
  /**
   * The message's identity (a UUID), the same while it streams (`request_start.messageId`), stored and loaded with
   * it, never sent to the model: hosts show it as the message's id (ACP `messageId`). Absent on messages stored
   * before ids existed and on compaction summaries.
   */
  id?: string;
  /** The model's reasoning ("thoughts"), from `reasoning_content` or `reasoning` deltas. Sent back as is. */
  reasoning_content?: string;
  tool_calls?: ToolCall[];
}

/** The result of one tool call. Exactly one per `tool_calls[i].id`, right after the assistant message. */
export interface ToolMessage {
  role: "tool";
  tool_call_id: string;
  content: string | ContentPart[];
}

export type ChatMessage = SystemMessage | UserMessage | AssistantMessage | ToolMessage;

/** How a tool call ended, kept with its result message (stored; never sent to the model). */
export interface ToolOutcome {
  /** The result is an error (`isError: true`: failed, refused, blocked or cancelled). */
  isError: boolean;
  /** From the call starting to run to its result, in ms (0 for a call that never ran). */
  durationMs: number;
  /**
   * What the host showed of the call when it ended: its announced display (title, locations) with the result's
   * (the diff, the terminal) over it. Stored so a replay or the viewer shows what was shown live.
   */
  display?: ToolDisplay;
}

/** A tool as offered to the model (OpenAI function-tool shape). */
export interface ToolDefinition {
  type: "function";
  function: {
    name: string;
    description?: string;
    /** JSON Schema of the arguments object. */
    parameters?: Record<string, unknown>;
  };
}

/** Token usage of one completion (or a sum of several). */
export interface Usage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  /** Prompt tokens served from the provider's cache, when reported. */
  cachedTokens?: number;
  /** Completion tokens spent on reasoning, when reported. */
  reasoningTokens?: number;
}

/** Adds two usages (`undefined` counts as zero). */
export function addUsage(a: Usage | undefined, b: Usage | undefined): Usage | undefined {
  if (!a) return b;
  if (!b) return a;
  const sum: Usage = {
    promptTokens: a.promptTokens + b.promptTokens,
    completionTokens: a.completionTokens + b.completionTokens,
    totalTokens: a.totalTokens + b.totalTokens,
  };
  if (a.cachedTokens !== undefined || b.cachedTokens !== undefined) {
    sum.cachedTokens = (a.cachedTokens ?? 0) + (b.cachedTokens ?? 0);
  }
  if (a.reasoningTokens !== undefined || b.reasoningTokens !== undefined) {
    sum.reasoningTokens = (a.reasoningTokens ?? 0) + (b.reasoningTokens ?? 0);
  }
  return sum;
}

/**
 * The text of message content: its text parts joined by `separator` (default a newline). Images and audio are left
 * out, or shown as `[image]` / `[audio]` with `placeholders` (transcripts, where their absence would mislead).
 */
export function contentText(
  content: string | ContentPart[] | null | undefined,
  options: { separator?: string; placeholders?: boolean } = {},
): string {
  if (content === null || content === undefined) return "";
  if (typeof content === "string") return content;
  const parts: string[] = [];
  for (const part of content) {
    if (part.type === "text") parts.push(part.text);
    else if (options.placeholders) parts.push(part.type === "image_url" ? "[image]" : "[audio]");
  }
  return parts.join(options.separator ?? "\n");
}

/** Text of the synthetic result given to a tool call that never got one (cancel, crash). */
export const MISSING_TOOL_RESULT = "Tool call cancelled: no result was produced.";

/**
 * Restores the tool-call/tool-result invariant providers require: after every assistant message with tool calls,
 * exactly one `tool` message per call id (synthetic results for missing ones, in call order), and no orphan or
 * duplicate tool messages. Returns the input array itself when it was already valid. For loading stored histories
 * that a crash left incomplete.
 */
export function repairToolPairs(messages: readonly ChatMessage[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  let changed = false;
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i] as ChatMessage;
    if (message.role === "tool") {
      changed = true; // reached only for tool messages not right after their assistant message: orphans
      continue;
    }
    out.push(message);
    if (message.role !== "assistant" || !message.tool_calls?.length) continue;
    const results = new Map<string, ToolMessage>();
    let j = i + 1;
    for (; j < messages.length && messages[j]?.role === "tool"; j++) {
      const tool = messages[j] as ToolMessage;
      const expected = message.tool_calls.some((c) => c.id === tool.tool_call_id);
      if (!expected || results.has(tool.tool_call_id)) changed = true;
      else results.set(tool.tool_call_id, tool);
    }
    for (const [k, call] of message.tool_calls.entries()) {
      const result = results.get(call.id);
      if (!result) changed = true;
      else if ((messages[i + 1 + k] as ToolMessage | undefined)?.tool_call_id !== call.id) changed = true;
      out.push(result ?? { role: "tool", tool_call_id: call.id, content: MISSING_TOOL_RESULT });
    }
    i = j - 1;
  }
  return changed ? out : (messages as ChatMessage[]);
}
