/**
 * A session's events as `session/update`s, with the state the translation keeps: the retry-aware text relays and the
 * model-call-id → ACP-tool-call-id map. Each event of the session's stream goes in (the loop's, here; the session's
 * own, by events.ts), zero or more updates come out (built by the pure translate functions).
 */
import type { ClientCapabilities, Cost, SessionUpdate, ToolCallUpdate } from "@agentclientprotocol/sdk";
import type { CrowEvent, LlmError, Usage } from "@crow/core";
import { sessionEventUpdates } from "./events.js";
import { originalBlocks, userBlocks } from "./replay.js";
import {
  messageChunk,
  newRelay,
  PROGRESS_TEXT_CHARS,
  relayDelta,
  relayRetry,
  type StreamRelay,
  thoughtChunk,
  toolCallFinished,
  toolCallProgress,
  toolCallProgressText,
  toolCallRunning,
  toolCallStarted,
  usageUpdate,
  userChunk,
} from "./translate.js";

export class EventRelay {
  private text: StreamRelay = newRelay();
  private reasoning: StreamRelay = newRelay();
  /** The id of the assistant message streaming now (every chunk of it carries it). */
  private messageId: string | undefined;
  private readonly ids = new Map<string, string>();
  /** Progress text per model call id, accumulated (each update carries it all: ACP replaces a call's content). */
  private readonly progress = new Map<string, string>();
  /** The `tool_call` of each open call, by model call id. */
  private readonly calls = new Map<string, ToolCallUpdate>();

  /**
   * @param usedIds ACP tool call ids already used in the session (shared across turns): providers that number
   *   calls per response (`call_0`…) would otherwise reuse ids the client already shows.
   */
  constructor(
    /** The context window of the session's model (it may change between turns). */
    private readonly contextWindow: () => number,
    private readonly usedIds: Set<string>,
    /** What the client said it can show (notices). */
    private readonly capabilities: () => ClientCapabilities | undefined,
    /** The session's cumulative cost after one more response, when the model has a price. */
    private readonly cost?: (usage: Usage) => Cost | undefined,
    /** What to tell the client when a request is retried (a notice, for clients that show them). */
    private readonly retried?: (attempt: number, error: LlmError) => SessionUpdate[],
  ) {}

  /**
   * A call as it was announced (`tool_call`: id, title, kind, locations), while it is open: a permission question
   * about it shows the same call, not a second rendering of it.
   */
  announced(callId: string): ToolCallUpdate | undefined {
    return this.calls.get(callId);
  }

  /** The ACP tool call id of a model call id (the id itself unless the session already used it). */
  toolCallId(callId: string): string {
    return this.ids.get(callId) ?? callId;
  }

  private assign(callId: string): string {
    let id = callId;
    for (let n = 2; this.usedIds.has(id); n++) id = `${callId}#${n}`;
    this.usedIds.add(id);
    this.ids.set(callId, id);
    return id;
  }

  /** The updates for one event, in order. */
  translate(event: CrowEvent): SessionUpdate[] {
    switch (event.type) {
      case "request_start":
        this.text = newRelay();
        this.reasoning = newRelay();
        this.messageId = event.messageId;
        return [];
      case "text_delta": {
        const { relay, out } = relayDelta(this.text, event.text);
        this.text = relay;
        return out ? [messageChunk(out, this.messageId)] : [];
      }
      case "reasoning_delta": {
        const { relay, out } = relayDelta(this.reasoning, event.text);
        this.reasoning = relay;
        return out ? [thoughtChunk(out, this.messageId)] : [];
      }
      case "retry":
        this.text = relayRetry(this.text);
        this.reasoning = relayRetry(this.reasoning);
        return this.retried?.(event.attempt, event.error) ?? [];
      case "assistant_message":
        return event.usage ? [usageUpdate(event.usage, this.contextWindow(), this.cost?.(event.usage))] : [];
      case "tool_call_pending": {
        const update = toolCallStarted(event.call, this.assign(event.call.id));
        const { sessionUpdate: _, ...call } = update;
        this.calls.set(event.call.id, call);
        return [update];
      }
      case "tool_call_running":
        return [toolCallRunning(this.toolCallId(event.id))];
      case "tool_call_progress": {
        const update = toolCallProgress(this.toolCallId(event.id), event.progress);
        if (update) return [update];
        // Plain text (a subagent's activity, output of a command without a client terminal): shown as it grows.
        const message = event.progress.message;
        if (!message) return [];
        // Keep a bounded tail: a long-running command must not make every update bigger than the last.
        const text = ((this.progress.get(event.id) ?? "") + message).slice(-2 * PROGRESS_TEXT_CHARS);
        this.progress.set(event.id, text);
        return [toolCallProgressText(this.toolCallId(event.id), text)];
      }
      case "tool_call_done":
        this.progress.delete(event.id);
        this.calls.delete(event.id);
        return [toolCallFinished(this.toolCallId(event.id), event.status, event.result)];
      case "stop":
        // The ids were needed only while the turn's calls could be updated.
        this.ids.clear();
        this.progress.clear();
        this.calls.clear();
        return [];
      case "message_appended": {
        // A steer joined the turn: the client shows it as the user's message, where the model got it.
        const { message } = event;
        if (message.role !== "user") return [];
        return (originalBlocks(message.original) ?? userBlocks(message.content)).map((b) => userChunk(b, message.id));
      }
      case "hook_error":
        return [];
      default:
        return sessionEventUpdates(event, this.capabilities());
    }
  }
}
