/**
 * A stored session as a readable Markdown transcript (`crow sessions show` / `export --format md`). Pure: a session
 * record and its messages in, text out. Tool calls show their arguments as JSON and their results as text, so the
 * transcript says exactly what the model saw and did.
 */
import type { ChatMessage, SessionRecord, StoredMessage } from "@crow/core";
import { contentText } from "@crow/core/internal";

/** Options of {@link markdownTranscript}. */
export interface MarkdownTranscriptOptions {
  /** Cut each tool result to this many characters (show: yes; export: no). */
  maxToolResultChars?: number;
}

/** A fence longer than any backtick run inside `text`, so the block cannot be closed early. */
function fence(text: string, lang = ""): string {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const ticks = "`".repeat(longest + 1);
  return `${ticks}${lang}\n${text}\n${ticks}`;
}

function clip(text: string, max: number | undefined): string {
  if (max === undefined || text.length <= max) return text;
  return `${text.slice(0, max)}\n… [${text.length - max} more characters; use 'crow sessions export' for everything]`;
}

function prettyArgs(raw: string): string {
  try {
    return JSON.stringify(JSON.parse(raw), null, 2);
  } catch {
    return raw;
  }
}

function renderMessage(message: ChatMessage, options: MarkdownTranscriptOptions): string {
  switch (message.role) {
    case "system":
      return `## System\n\n${fence(contentText(message.content, { placeholders: true }))}`;
    case "user":
      return `## User\n\n${contentText(message.content, { placeholders: true })}`;
    case "assistant": {
      const parts: string[] = ["## Assistant"];
      if (message.reasoning_content) {
        parts.push(
          message.reasoning_content
            .split("\n")
            .map((line) => `> ${line}`)
            .join("\n"),
        );
      }
      const text = contentText(message.content, { placeholders: true });
      if (text) parts.push(text);
      for (const call of message.tool_calls ?? []) {
        parts.push(
          `**Tool call** \`${call.function.name}\` (${call.id})\n\n${fence(prettyArgs(call.function.arguments), "json")}`,
        );
      }
      return parts.join("\n\n");
    }
    case "tool":
      return `**Tool result** (${message.tool_call_id})\n\n${fence(clip(contentText(message.content, { placeholders: true }), options.maxToolResultChars))}`;
  }
}

/** The whole session as Markdown: a header with its metadata, then every message in order. */
export function markdownTranscript(
  session: SessionRecord,
  messages: readonly StoredMessage[],
  options: MarkdownTranscriptOptions = {},
): string {
  const header = [
    `# ${session.title ?? session.id}`,
    "",
    `- id: ${session.id}`,
    `- cwd: ${session.cwd}`,
    ...(session.model ? [`- model: ${session.model}`] : []),
    ...(session.mode ? [`- mode: ${session.mode}`] : []),
    ...(session.promptId ? [`- system prompt: ${session.promptId}`] : []),
    ...(session.parentId ? [`- parent session: ${session.parentId}`] : []),
    ...(session.forkedFrom ? [`- forked from: ${session.forkedFrom}`] : []),
    `- created: ${session.createdAt}`,
    `- updated: ${session.updatedAt}`,
    `- messages: ${messages.length}`,
  ].join("\n");
  const body = messages.map((stored) => renderMessage(stored.message, options));
  return `${[header, ...body].join("\n\n")}\n`;
}
