/**
 * The translation layer: every `session/update` payload the ACP agent sends is built here (the modules that decide
 * which updates an event becomes, event-relay.ts, events.ts, compaction-updates.ts, subagent-sessions.ts, call these). Pure:
 * no I/O and no session state beyond what callers pass in, so every mapping is unit-tested table-style
 * (test/translate.test.ts). Builders of the unstable subagent kinds are in subagent-updates.ts.
 */
import type {
  ToolKind as AcpToolKind,
  ClientCapabilities,
  ContentBlock,
  Cost,
  PlanEntry,
  SessionConfigOption,
  SessionUpdate,
  ToolCallContent,
  ToolCallUpdate,
} from "@agentclientprotocol/sdk";
import type {
  CommandInfo,
  CompactionEvent,
  ContentPart,
  ToolCallInfo,
  ToolCallStatus,
  ToolDisplay,
  ToolProgress,
  ToolResult,
  Usage,
} from "@crow/core";
import { withoutResultDiff } from "@crow/mcp/edit";
import { DIAGNOSTICS_META_KEY } from "@crow/mcp/lsp";

/** Streamed text of the agent: its answer or its reasoning, with the id of the message it belongs to. */
export function textChunk(
  kind: "agent_message_chunk" | "agent_thought_chunk",
  text: string,
  messageId?: string,
): SessionUpdate {
  return { sessionUpdate: kind, content: { type: "text", text }, ...(messageId ? { messageId } : {}) };
}

/** Text of the agent; `messageId`: the message it belongs to (every chunk of one message carries the same). */
export function messageChunk(text: string, messageId?: string): SessionUpdate {
  return textChunk("agent_message_chunk", text, messageId);
}

/** Reasoning of the agent, with the id of the message it belongs to (as {@link messageChunk}). */
export function thoughtChunk(text: string, messageId?: string): SessionUpdate {
  return textChunk("agent_thought_chunk", text, messageId);
}

/** A block of the user's prompt, as a replayed history shows it again. */
export function userChunk(content: ContentBlock, messageId?: string): SessionUpdate {
  return { sessionUpdate: "user_message_chunk", content, ...(messageId ? { messageId } : {}) };
}

/** Whether the client shows notices (`clientCapabilities.session.notices`, an ACP extension Crow's clients declare). */
export function showsNotices(capabilities: ClientCapabilities | undefined): boolean {
  return Boolean(capabilities?.session?.notices);
}

/** What a notice says: how grave, a short title, the text. */
export interface Notice {
  severity: "info" | "warning" | "error";
  title: string;
  description: string;
}

/**
 * A notice as the client can show it: a `notice` when it {@link showsNotices}, else `fallback` as agent text (no
 * update when there is no fallback: the notice only mattered to clients that show notices).
 */
export function noticeUpdates(
  capabilities: ClientCapabilities | undefined,
  notice: Notice,
  fallback?: string,
): SessionUpdate[] {
  if (showsNotices(capabilities)) return [{ sessionUpdate: "notice", ...notice }];
  return fallback === undefined ? [] : [messageChunk(fallback)];
}

/** `session_info_update`: the session's title (and when it changed, when known). */
export function sessionInfoUpdate(title: string, updatedAt?: string): SessionUpdate {
  return { sessionUpdate: "session_info_update", title, ...(updatedAt ? { updatedAt } : {}) };
}

/** `plan`: the whole plan as it stands (ACP replaces the client's plan with each). */
export function planUpdate(entries: readonly PlanEntry[]): SessionUpdate {
  return { sessionUpdate: "plan", entries: entries.map((e) => ({ ...e })) };
}

/** `config_option_update`: the selectors' new state. */
export function configOptionUpdate(configOptions: SessionConfigOption[]): SessionUpdate {
  return { sessionUpdate: "config_option_update", configOptions };
}

/** A `tool_call_update` that replaces a call's content (a permission question's proposal, shown in the thread). */
export function toolCallContent(toolCallId: string, content: ToolCallContent[]): SessionUpdate {
  return { sessionUpdate: "tool_call_update", toolCallId, content };
}

/**
 * A call's display as ACP tool-call content: the diff (oldText null for a new file), then the editor terminal
 * running the command.
 */
export function displayContent(display: ToolDisplay | undefined): ToolCallContent[] {
  const content: ToolCallContent[] = [];
  if (display?.diff) content.push({ type: "diff", ...display.diff });
  if (display?.terminalId) content.push({ type: "terminal", terminalId: display.terminalId });
  return content;
}

/** `tool_call` (pending): announced as soon as the model's message is complete, with its display. */
export function toolCallStarted(call: ToolCallInfo, toolCallId: string): SessionUpdate & ToolCallUpdate {
  const update: SessionUpdate & ToolCallUpdate = {
    sessionUpdate: "tool_call",
    toolCallId,
    title: call.display.title ?? call.name,
    kind: call.kind satisfies AcpToolKind,
    status: "pending",
    rawInput: call.args,
  };
  if (call.display.locations?.length) update.locations = call.display.locations;
  return update;
}

/** `tool_call_update` (in_progress): the call passed the gates and runs. */
export function toolCallRunning(toolCallId: string): SessionUpdate {
  return { sessionUpdate: "tool_call_update", toolCallId, status: "in_progress" };
}

/** A progress report as a `tool_call_update`: editor content (a live terminal) and locations; text is not relayed. */
export function toolCallProgress(toolCallId: string, progress: ToolProgress): SessionUpdate | undefined {
  const content = displayContent(progress.display);
  const locations = progress.display?.locations;
  if (content.length === 0 && !locations?.length) return undefined;
  const update: SessionUpdate = { sessionUpdate: "tool_call_update", toolCallId };
  if (content.length > 0) update.content = content;
  if (locations?.length) update.locations = locations;
  return update;
}

/** How much of a call's progress text is shown (the tail: the newest activity matters). */
export const PROGRESS_TEXT_CHARS = 4000;

/**
 * A tool call's progress text so far (a subagent's activity, a command's output) as its content. ACP replaces the
 * content with each update, so callers pass the whole text; only its last {@link PROGRESS_TEXT_CHARS} are shown.
 */
export function toolCallProgressText(toolCallId: string, text: string): SessionUpdate {
  const shown = text.length > PROGRESS_TEXT_CHARS ? `…${text.slice(-PROGRESS_TEXT_CHARS)}` : text;
  return {
    sessionUpdate: "tool_call_update",
    toolCallId,
    content: [{ type: "content", content: { type: "text", text: shown } }],
  };
}

/** A tool result's model-facing content as ACP tool-call content (text and images). */
export function resultContent(content: string | ContentPart[]): ToolCallContent[] {
  if (typeof content === "string")
    return content ? [{ type: "content", content: { type: "text", text: content } }] : [];
  const out: ToolCallContent[] = [];
  for (const part of content) {
    if (part.type === "text" && part.text) out.push({ type: "content", content: { type: "text", text: part.text } });
    if (part.type === "image_url") {
      const match = /^data:([^;,]+);base64,(.*)$/s.exec(part.image_url.url);
      if (match?.[1] && match[2] !== undefined) {
        out.push({ type: "content", content: { type: "image", mimeType: match[1], data: match[2] } });
      }
    }
  }
  return out;
}

/**
 * `tool_call_update` (completed/failed) with the result's content: the display's diff/terminal content first (the
 * editor renders those best), then the text the model got (without a diff the diff block already shows). `rawOutput`
 * is the whole text, except beside a diff block (see below). Blocked and cancelled calls are `failed`.
 */
export function toolCallFinished(toolCallId: string, status: ToolCallStatus, result: ToolResult): SessionUpdate {
  // The editor shows the diff as a diff block: the same diff in the text after it would be shown twice.
  const text =
    result.display?.diff && typeof result.content === "string" ? withoutResultDiff(result.content) : result.content;
  const content: ToolCallContent[] = [...displayContent(result.display), ...resultContent(text)];
  const update: SessionUpdate = {
    sessionUpdate: "tool_call_update",
    toolCallId,
    status: status === "completed" ? "completed" : "failed",
    content,
  };
  if (result.display?.locations?.length) update.locations = result.display.locations;
  // rawOutput is shown by clients too (acpx prints it beside the content): with a diff block, the content already
  // says it all, so no rawOutput repeats the text and the diff a third time.
  if (typeof result.content === "string" && !result.display?.diff) {
    update.rawOutput = { content: result.content, isError: !!result.isError };
  }
  // The text above already says them; `crow run` draws them under the diff from this.
  if (result.display?.diagnostics) update._meta = { [DIAGNOSTICS_META_KEY]: result.display.diagnostics };
  return update;
}

/** `usage_update`: the last request's prompt plus completion tokens against the context window. */
export function usageUpdate(lastUsage: Usage, contextWindow: number, cost?: Cost): SessionUpdate {
  return { sessionUpdate: "usage_update", used: lastUsage.totalTokens, size: contextWindow, ...(cost ? { cost } : {}) };
}

export function commandsUpdate(commands: readonly CommandInfo[]): SessionUpdate {
  return {
    sessionUpdate: "available_commands_update",
    availableCommands: commands.map((c) => ({
      name: c.name,
      description: c.description,
      ...(c.hint ? { input: { hint: c.hint } } : {}),
    })),
  };
}

export function modeUpdate(modeId: string): SessionUpdate {
  return { sessionUpdate: "current_mode_update", currentModeId: modeId };
}

type CompactionDone = Extract<CompactionEvent, { type: "compaction_done" }>;

/** `compaction_update` (in_progress or failed) for a client that advertised `session.compaction`. */
export function compactionUpdate(
  compactionId: string,
  status: "in_progress" | "failed",
  error?: string,
): SessionUpdate {
  return { sessionUpdate: "compaction_update", compactionId, status, ...(error !== undefined ? { error } : {}) };
}

/** `compaction_update` (completed): the summary, and Crow's details under `_meta.crow`. */
export function compactionCompleted(event: CompactionDone): SessionUpdate {
  return {
    sessionUpdate: "compaction_update",
    compactionId: event.id,
    status: "completed",
    summary: [{ type: "text", text: event.summary }],
    _meta: {
      crow: {
        reason: event.reason,
        archiveId: event.archiveId ?? null,
        messagesBefore: event.messagesBefore,
        messagesAfter: event.messagesAfter,
      },
    },
  };
}

/**
 * Relay of one streamed channel (text or reasoning) across LLM retries. The client cannot take back what it was
 * sent, so after a `retry` the new attempt's output is matched against what was already sent: the repeated prefix
 * is swallowed, only new text goes out, and if the attempt diverges a short notice marks the restart.
 */
export interface StreamRelay {
  /** Everything sent to the client during the current request. */
  sent: string;
  /** After a retry: the new attempt's output so far (undefined when not replaying). */
  replay?: string;
}

/** Shown when a retried attempt says something different from what the client already has. */
export const RESTART_NOTICE =
  "\n\n[The connection to the model was interrupted; the answer continues from a new attempt.]\n\n";

export function newRelay(): StreamRelay {
  return { sent: "" };
}

/** After a `retry` event: start matching the next attempt against what was sent. */
export function relayRetry(relay: StreamRelay): StreamRelay {
  return relay.sent ? { sent: relay.sent, replay: "" } : { sent: "" };
}

/** Feeds one delta; returns the new state and the text to send (empty string: nothing). */
export function relayDelta(relay: StreamRelay, delta: string): { relay: StreamRelay; out: string } {
  if (relay.replay === undefined) return { relay: { sent: relay.sent + delta }, out: delta };
  const attempt = relay.replay + delta;
  if (relay.sent.startsWith(attempt)) return { relay: { sent: relay.sent, replay: attempt }, out: "" };
  if (attempt.startsWith(relay.sent)) return { relay: { sent: attempt }, out: attempt.slice(relay.sent.length) };
  let common = 0;
  while (common < attempt.length && attempt[common] === relay.sent[common]) common++;
  return { relay: { sent: attempt }, out: RESTART_NOTICE + attempt.slice(common) };
}
