/**
 * `session/load`'s history replay, pure: a stored conversation → the `session/update`s that show it again, in order.
 * User messages become `user_message_chunk`s (the prompt's own blocks when the agent kept them: resources and links
 * come back as sent, not as the text the model got), assistant reasoning `agent_thought_chunk`, text `agent_message_chunk`,
 * each tool call a `tool_call` followed (at its result) by a `tool_call_update` with the result text; write and edit
 * calls get their diff back from the stored arguments (`content`, or `old_string` → `new_string`), since the file's
 * state at the time is not stored. Tool call ids are assigned exactly as the live turns did (see EventRelay), and the
 * set of used ids is returned so the loaded session keeps them unique. Each message's chunks carry the id it had
 * when it streamed (`messageId`; messages stored before ids existed have none).
 */
import path from "node:path";
import type { ContentBlock, SessionUpdate, ToolCallContent } from "@agentclientprotocol/sdk";
import {
  type ChatMessage,
  type ContentPart,
  callDisplay,
  contentText,
  MISSING_TOOL_RESULT,
  type ToolCall,
  toolKind,
} from "@crow/core";
import { messageChunk, thoughtChunk, toolCallFinished, toolCallStarted } from "./translate.js";

/** A stored message's id as ACP's `messageId` (messages stored before ids existed have none). */
function idOf(message: { id?: string }): { messageId?: string } {
  return message.id ? { messageId: message.id } : {};
}

/** User content as ACP content blocks (text, images, audio). */
export function userBlocks(content: string | ContentPart[]): ContentBlock[] {
  if (typeof content === "string") return content ? [{ type: "text", text: content }] : [];
  const blocks: ContentBlock[] = [];
  for (const part of content) {
    if (part.type === "text") {
      if (part.text) blocks.push({ type: "text", text: part.text });
    } else if (part.type === "image_url") {
      const match = /^data:([^;,]+);base64,(.*)$/s.exec(part.image_url.url);
      if (match?.[1] && match[2] !== undefined) blocks.push({ type: "image", mimeType: match[1], data: match[2] });
      else blocks.push({ type: "resource_link", uri: part.image_url.url, name: part.image_url.url });
    } else {
      blocks.push({ type: "audio", mimeType: `audio/${part.input_audio.format}`, data: part.input_audio.data });
    }
  }
  return blocks;
}

const BLOCK_TYPES = new Set(["text", "image", "audio", "resource", "resource_link"]);

/** The prompt's own content blocks, as the agent kept them (`original`), when they look like content blocks. */
export function originalBlocks(original: unknown): ContentBlock[] | undefined {
  if (!Array.isArray(original) || original.length === 0) return undefined;
  const valid = original.every(
    (b) => typeof b === "object" && b !== null && BLOCK_TYPES.has((b as { type?: unknown }).type as string),
  );
  return valid ? (original as ContentBlock[]) : undefined;
}

function parseArgs(call: ToolCall): Record<string, unknown> {
  try {
    const value = JSON.parse(call.function.arguments) as unknown;
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

/** The diff a write or edit call made, from its arguments alone (undefined for other tools or odd arguments). */
export function diffFromArgs(tool: string, args: Record<string, unknown>, cwd: string): ToolCallContent | undefined {
  const base = tool.slice(tool.lastIndexOf("_") + 1);
  const file = args.file_path ?? args.path;
  if (typeof file !== "string" || file === "") return undefined;
  const abs = path.resolve(cwd, file);
  if (base === "write" && typeof args.content === "string") return { type: "diff", path: abs, newText: args.content };
  if (base === "edit" && typeof args.old_string === "string" && typeof args.new_string === "string") {
    return { type: "diff", path: abs, oldText: args.old_string || null, newText: args.new_string };
  }
  return undefined;
}

/** Whether a tool result text says the call did not do its job (cancelled, refused, failed). */
function failedResult(text: string): boolean {
  return (
    text === MISSING_TOOL_RESULT ||
    /^(Tool call (cancelled|blocked|refused)|Error\b|Blocked\b|Refused\b|The user rejected)/i.test(text)
  );
}

export interface Replay {
  updates: SessionUpdate[];
  /** ACP tool call ids used by the replayed history (continue the session's EventRelay with these). */
  usedIds: Set<string>;
}

/** The updates that replay `messages` (a history without its system prompt) for a session working in `cwd`. */
export function replayHistory(messages: readonly ChatMessage[], cwd: string): Replay {
  const updates: SessionUpdate[] = [];
  const usedIds = new Set<string>();
  // Per assistant message: model call id → [ACP id, name, args]; cleared at the next assistant message.
  let calls = new Map<string, { id: string; name: string; args: Record<string, unknown> }>();
  for (const message of messages) {
    switch (message.role) {
      case "system":
        break;
      case "user":
        for (const content of originalBlocks(message.original) ?? userBlocks(message.content))
          updates.push({ sessionUpdate: "user_message_chunk", content, ...idOf(message) });
        break;
      case "assistant": {
        calls = new Map();
        if (message.reasoning_content) {
          updates.push(thoughtChunk(message.reasoning_content, message.id));
        }
        if (message.content) {
          updates.push(messageChunk(message.content, message.id));
        }
        for (const call of message.tool_calls ?? []) {
          let id = call.id;
          for (let n = 2; usedIds.has(id); n++) id = `${call.id}#${n}`;
          usedIds.add(id);
          const args = parseArgs(call);
          const name = call.function.name;
          calls.set(call.id, { id, name, args });
          updates.push(
            toolCallStarted(
              {
                id: call.id,
                name,
                kind: toolKind(name),
                args,
                rawArguments: call.function.arguments,
                display: callDisplay(name, args),
              },
              id,
            ),
          );
        }
        break;
      }
      case "tool": {
        const call = calls.get(message.tool_call_id);
        if (!call) break;
        const failed = failedResult(contentText(message.content, { separator: "" }).trimStart());
        const diff = failed ? undefined : diffFromArgs(call.name, call.args, cwd);
        const finished = toolCallFinished(call.id, failed ? "failed" : "completed", { content: message.content });
        // The stored arguments are all that is left of the change (a write's old text is unknown).
        if (diff && finished.sessionUpdate === "tool_call_update")
          finished.content = [diff, ...(finished.content ?? [])];
        updates.push(finished);
        break;
      }
    }
  }
  return { updates, usedIds };
}
