/**
 * `session/load`'s history replay, pure: a stored conversation → the `session/update`s that show it again, in order.
 * User messages become `user_message_chunk`s (the prompt's own blocks when the agent kept them: resources and links
 * come back as sent, not as the text the model got), assistant reasoning `agent_thought_chunk`, text `agent_message_chunk`,
 * each tool call a `tool_call` followed (at its result) by a `tool_call_update` with the result text. A call shows
 * the display stored with its result (title, locations, the whole-file diff the live session showed) and ends as its
 * stored error flag says; results stored before displays were kept (or whose diff was too big to keep) get their
 * title from the tool's profile and a write's or edit's diff back from the call's arguments. Tool call ids are assigned exactly as the live turns did (see EventRelay), and the
 * set of used ids is returned so the loaded session keeps them unique. Each message's chunks carry the id it had
 * when it streamed (`messageId`; messages stored before ids existed have none).
 */
import type { ContentBlock, SessionUpdate } from "@agentclientprotocol/sdk";
import type { ChatMessage, ContentPart, ToolCall, ToolDisplay, ToolMessage } from "@crow/core";
import { callArguments, contentText, MISSING_TOOL_RESULT } from "@crow/core/internal";
import { toolProfile } from "../tools/builtin/index.js";
import { messageChunk, thoughtChunk, toolCallFinished, toolCallStarted, userChunk } from "./translate.js";

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

/**
 * Whether a tool result text says the call did not do its job (cancelled, refused, failed): for results stored
 * without their error flag, and the ones a crash left unanswered.
 */
function failedResult(text: string): boolean {
  return (
    text === MISSING_TOOL_RESULT ||
    /^(Tool call (cancelled|blocked|refused)|Error\b|Blocked\b|Refused\b|The user rejected)/i.test(text)
  );
}

/** What the store kept of how a tool call ended ({@link Store.loadToolOutcomes}; a `StoredToolDisplay` is one too). */
export interface ReplayOutcome {
  toolCallId: string;
  /** Absent: stored before error flags were kept (the result's text tells). */
  isError?: boolean;
  /** Absent: stored before displays were kept. */
  display?: ToolDisplay;
}

/**
 * The stored outcome of each tool result in `messages`: per call id, the stored outcomes in order (a model may reuse
 * an id in a later turn). A result a crash left unanswered (repaired with {@link MISSING_TOOL_RESULT}) was never
 * stored, so it takes none.
 */
function pairOutcomes(
  messages: readonly ChatMessage[],
  outcomes: readonly ReplayOutcome[],
): Map<ToolMessage, ReplayOutcome> {
  const queues = new Map<string, ReplayOutcome[]>();
  for (const outcome of outcomes) {
    const queue = queues.get(outcome.toolCallId);
    if (queue) queue.push(outcome);
    else queues.set(outcome.toolCallId, [outcome]);
  }
  const paired = new Map<ToolMessage, ReplayOutcome>();
  for (const message of messages) {
    if (message.role !== "tool" || message.content === MISSING_TOOL_RESULT) continue;
    const outcome = queues.get(message.tool_call_id)?.shift();
    if (outcome) paired.set(message, outcome);
  }
  return paired;
}

/** The tool results answering the calls of the assistant message at `index`, by call id. */
function resultsOf(messages: readonly ChatMessage[], index: number): Map<string, ToolMessage> {
  const results = new Map<string, ToolMessage>();
  for (let i = index + 1; i < messages.length; i++) {
    const message = messages[i];
    if (message?.role !== "tool") break;
    if (!results.has(message.tool_call_id)) results.set(message.tool_call_id, message);
  }
  return results;
}

export interface Replay {
  updates: SessionUpdate[];
  /** ACP tool call ids used by the replayed history (continue the session's EventRelay with these). */
  usedIds: Set<string>;
  /** The `task` calls that ran a child session (stored with their results), in history order. */
  subagents: ReplayedSubagent[];
}

/** A `task` call of a replayed history and the child session it ran. */
export interface ReplayedSubagent {
  /** Where in `updates` the call's result (`tool_call_update`) is. */
  at: number;
  toolCallId: string;
  childId: string;
  /** How the child's turn ended (as stored with the result). */
  stopReason?: string;
  /** The call's arguments (`description`, `prompt`). */
  args: Record<string, unknown>;
}

/** A stored tool call being replayed. */
interface ReplayedCall {
  /** Its ACP id (the model's, made unique as the live session did). */
  id: string;
  name: string;
  args: Record<string, unknown>;
  /** What the store kept of its result. */
  outcome?: ReplayOutcome;
}

/**
 * The `tool_call` announcing a stored call: the title and files as the live session announced them (kept with the
 * result), else as the tool's profile makes them of the name and arguments.
 */
function announcedCall(call: ToolCall, replayed: ReplayedCall): SessionUpdate {
  const { name, args, outcome } = replayed;
  const profile = toolProfile(name);
  const display = profile.display(name, args);
  if (outcome?.display?.title) display.title = outcome.display.title;
  if (outcome?.display?.locations?.length) display.locations = outcome.display.locations;
  const info = { id: call.id, name, kind: profile.kind, args, rawArguments: call.function.arguments, display };
  return toolCallStarted(info, replayed.id);
}

/**
 * The `tool_call_update` ending a replayed call with its result: failed as its stored error flag says (for rows stored
 * without one, as its text says), with what the live update showed but its editor terminal (released with the turn).
 * With no diff kept, the stored arguments are all that is left of a change (a write's old text is unknown).
 */
function finishedCall(call: ReplayedCall, message: ToolMessage, cwd: string): SessionUpdate {
  const display = call.outcome?.display;
  const failed = call.outcome?.isError ?? failedResult(contentText(message.content, { separator: "" }).trimStart());
  const shown: ToolDisplay = {};
  if (display?.diff) shown.diff = display.diff;
  if (display?.locations?.length) shown.locations = display.locations;
  const finished = toolCallFinished(call.id, failed ? "failed" : "completed", {
    content: message.content,
    display: shown,
  });
  const diff = failed || shown.diff ? undefined : toolProfile(call.name).change?.fromArgs(call.args, cwd);
  if (diff && finished.sessionUpdate === "tool_call_update")
    finished.content = [{ type: "diff", ...diff }, ...(finished.content ?? [])];
  return finished;
}

/**
 * The updates that replay `messages` (a history without its system prompt) for a session working in `cwd`, with the
 * outcomes stored with its tool results ({@link Store.loadToolOutcomes}; none for a history stored before them).
 */
export function replayHistory(
  messages: readonly ChatMessage[],
  cwd: string,
  outcomes: readonly ReplayOutcome[] = [],
): Replay {
  const updates: SessionUpdate[] = [];
  const usedIds = new Set<string>();
  const subagents: ReplayedSubagent[] = [];
  const stored = pairOutcomes(messages, outcomes);
  // Per assistant message: model call id → the call being replayed; cleared at the next one.
  let calls = new Map<string, ReplayedCall>();
  for (const [index, message] of messages.entries()) {
    switch (message.role) {
      case "system":
        break;
      case "user":
        for (const content of originalBlocks(message.original) ?? userBlocks(message.content))
          updates.push(userChunk(content, message.id));
        break;
      case "assistant": {
        calls = new Map();
        if (message.reasoning_content) {
          updates.push(thoughtChunk(message.reasoning_content, message.id));
        }
        if (message.content) {
          updates.push(messageChunk(message.content, message.id));
        }
        const results = resultsOf(messages, index);
        for (const call of message.tool_calls ?? []) {
          let id = call.id;
          for (let n = 2; usedIds.has(id); n++) id = `${call.id}#${n}`;
          usedIds.add(id);
          const result = results.get(call.id);
          const outcome = result ? stored.get(result) : undefined;
          const args = callArguments(call) ?? {};
          const replayed: ReplayedCall = { id, name: call.function.name, args, ...(outcome ? { outcome } : {}) };
          calls.set(call.id, replayed);
          updates.push(announcedCall(call, replayed));
        }
        break;
      }
      case "tool": {
        const call = calls.get(message.tool_call_id);
        if (!call) break;
        const finished = finishedCall(call, message, cwd);
        const child = call.outcome?.display?.subagent;
        if (child) {
          const stopReason = child.stopReason ? { stopReason: child.stopReason } : {};
          subagents.push({
            at: updates.length,
            toolCallId: call.id,
            childId: child.sessionId,
            args: call.args,
            ...stopReason,
          });
        }
        updates.push(finished);
        break;
      }
    }
  }
  return { updates, usedIds, subagents };
}
