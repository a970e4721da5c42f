/**
 * The span to summarize as plain text, pure. Tool calls and their results become text, so the summarizer request
 * carries no `tool_calls` and no `tool` messages at all: providers reject tool messages whose call is missing, and
 * upstream's compaction sent exactly that (it dropped assistant `tool_calls` but kept the `tool` messages).
 */
import { type ChatMessage, type ContentPart, contentText } from "../messages.js";

export interface TranscriptOptions {
  /** Longest tool result kept, in characters (default 2 000); longer ones keep their start and end. */
  maxToolResultChars?: number;
  /** Longest user or assistant text kept (default 8 000). */
  maxMessageChars?: number;
  /** Longest transcript (default 200 000, about 50 000 tokens); beyond it the middle messages are left out. */
  maxChars?: number;
}

/** Message text for the summarizer: images and audio become placeholders. */
export function summaryText(content: string | ContentPart[] | null | undefined): string {
  return contentText(content, { placeholders: true });
}

/** Keeps the start and the end of a long text, with a note of what was cut in between. */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const head = Math.ceil(max * 0.6);
  const tail = max - head;
  return `${text.slice(0, head)}\n[… ${text.length - max} characters omitted …]\n${text.slice(text.length - tail)}`;
}

function block(message: ChatMessage, toolNames: Map<string, string>, limits: Required<TranscriptOptions>): string {
  switch (message.role) {
    case "system":
      return `[system]\n${clip(message.content, limits.maxMessageChars)}`;
    case "user":
      return `[user]\n${clip(summaryText(message.content), limits.maxMessageChars)}`;
    case "assistant": {
      const lines: string[] = [];
      const text = summaryText(message.content).trim();
      if (text) lines.push(clip(text, limits.maxMessageChars));
      for (const call of message.tool_calls ?? []) {
        toolNames.set(call.id, call.function.name);
        lines.push(`→ called ${call.function.name}(${clip(call.function.arguments, limits.maxToolResultChars)})`);
      }
      return `[assistant]\n${lines.join("\n") || "(no text)"}`;
    }
    case "tool": {
      const name = toolNames.get(message.tool_call_id) ?? "tool";
      return `[${name} result]\n${clip(summaryText(message.content), limits.maxToolResultChars)}`;
    }
  }
}

/**
 * Renders messages as a transcript: one block per message (`[user]`, `[assistant]` with `→ called name(args)`
 * lines, `[name result]`), long texts clipped. When the whole is still longer than `maxChars`, messages from the
 * middle of the span are left out (with a note): the start sets up the task, the end is where the work stands.
 */
export function renderTranscript(messages: readonly ChatMessage[], options: TranscriptOptions = {}): string {
  const limits: Required<TranscriptOptions> = {
    maxToolResultChars: options.maxToolResultChars ?? 2_000,
    maxMessageChars: options.maxMessageChars ?? 8_000,
    maxChars: options.maxChars ?? 200_000,
  };
  const toolNames = new Map<string, string>();
  const blocks = messages.map((m) => block(m, toolNames, limits));
  const separator = "\n\n";
  const total = blocks.reduce((n, b) => n + b.length + separator.length, 0);
  if (total <= limits.maxChars) return blocks.join(separator);
  // Keep a third of the budget for the start and the rest for the end.
  const headBudget = Math.floor(limits.maxChars / 3);
  const head: string[] = [];
  let used = 0;
  let i = 0;
  for (; i < blocks.length && used + (blocks[i] as string).length <= headBudget; i++) {
    head.push(blocks[i] as string);
    used += (blocks[i] as string).length + separator.length;
  }
  const tail: string[] = [];
  let j = blocks.length - 1;
  for (; j >= i && used + (blocks[j] as string).length <= limits.maxChars; j--) {
    tail.unshift(blocks[j] as string);
    used += (blocks[j] as string).length + separator.length;
  }
  const omitted = j - i + 1;
  return [...head, `[… ${omitted} message(s) omitted to fit the summarizer's context …]`, ...tail].join(separator);
}
