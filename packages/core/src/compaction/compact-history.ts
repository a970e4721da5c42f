/**
 * How a history is compacted: `[first user, summary, last user …]` replaces it — summarized with the LLM, then the
 * stored history swapped atomically (the old one becomes an archive, the session keeps its id, and the workspace
 * checkpoints of its turns stay with it under the kept user messages). Progress is reported as events.
 *
 * When a session compacts is policy.ts's.
 */
import { randomUUID } from "node:crypto";
import { errorText } from "../error-text.js";
import type { CompactedEvent } from "../hooks/types.js";
import type { LlmClient, RequestParams } from "../llm/types.js";
import type { AssistantMessage, ChatMessage, Usage } from "../messages.js";
import { promptHash } from "../store/checkpoints.js";
import type { CheckpointMove, MessageInput, ReplaceOptions } from "../store/types.js";
import { type CompactionPlan, compactedHistory, nothingToCompactMessage, planCompaction } from "./plan.js";
import { CompactionError, summarize } from "./summarize.js";
import type { TranscriptOptions } from "./transcript.js";

/** What started a compaction. */
export type CompactionReason = "threshold" | "manual" | "context_length";

/** The part of the store compaction needs. */
export interface CompactionStore {
  replaceMessages(sessionId: string, messages: readonly MessageInput[], options?: ReplaceOptions): Promise<string>;
}

/** Progress of one compaction (`id` is unique; the ACP layer maps these to `compaction_update`s or notices). */
export type CompactionEvent =
  | { type: "compaction_started"; id: string; reason: CompactionReason }
  | {
      type: "compaction_done";
      id: string;
      reason: CompactionReason;
      /** The stored summary (the model's text). */
      summary: string;
      /** Where the pre-compaction history is archived (no store: undefined). */
      archiveId?: string;
      messagesBefore: number;
      messagesAfter: number;
      usage?: Usage;
    }
  | { type: "compaction_failed"; id: string; reason: CompactionReason; message: string };

export type CompactionResult =
  | {
      compacted: true;
      history: ChatMessage[];
      summary: string;
      archiveId?: string;
      messagesBefore: number;
      messagesAfter: number;
    }
  | { compacted: false; message: string };

/** What compacting a session's history needs besides the request. */
export interface CompactHistoryOptions {
  sessionId: string;
  /** Where the history is swapped; without one, compaction happens in memory only. */
  store?: CompactionStore;
  /** Runs right before the swap (persistence: wait until every queued message is stored). */
  beforeSwap?: () => Promise<void>;
  /**
   * Runs on the new history before it is stored (the session's `compacted` hooks): returns the history to keep.
   * `signal` is the compaction's.
   */
  rewrite?: (event: CompactedEvent, signal: AbortSignal) => Promise<ChatMessage[]>;
  /** Sampling options of the summarizer request. */
  params?: RequestParams;
  transcript?: TranscriptOptions;
}

export interface CompactRequest {
  /** The session's history (without the system prompt). */
  history: readonly ChatMessage[];
  llm: LlmClient;
  model: string;
  reason: CompactionReason;
  signal?: AbortSignal;
  onEvent?: (event: CompactionEvent) => void;
}

/**
 * Compacts `request.history`: summary, then the atomic swap in the store. Resolves `{compacted: false}` when there
 * is nothing to summarize; rejects with {@link CompactionError} when the summary or the swap fails (the history and
 * the store are then unchanged). Emits started/done/failed events (none when there was nothing to do).
 */
export async function compactHistory(
  request: CompactRequest,
  options: CompactHistoryOptions,
): Promise<CompactionResult> {
  const plan = planCompaction(request.history);
  if ("reason" in plan) return { compacted: false, message: nothingToCompactMessage(plan) };
  const id = `compaction-${randomUUID().slice(0, 8)}`;
  const { reason } = request;
  const emit = (event: CompactionEvent) => {
    try {
      request.onEvent?.(event);
    } catch {
      // a listener's failure must not undo a compaction
    }
  };
  emit({ type: "compaction_started", id, reason });
  try {
    const summary = await summarize(plan, {
      llm: request.llm,
      model: request.model,
      ...(request.signal ? { signal: request.signal } : {}),
      ...(options.params ? { params: options.params } : {}),
      ...(options.transcript ? { transcript: options.transcript } : {}),
    });
    let history = compactedHistory(plan, summary.text);
    const summaryMessage = history[plan.system.length + 1] as AssistantMessage;
    if (options.rewrite) {
      const event = { history, summary: summaryMessage, summarized: plan.middle };
      history = await options.rewrite(event, request.signal ?? new AbortController().signal);
    }
    const archiveId = options.store ? await swap(options.store, options, plan, request.history, history) : undefined;
    const done = {
      compacted: true as const,
      history,
      summary: summary.text,
      ...(archiveId ? { archiveId } : {}),
      messagesBefore: request.history.length,
      messagesAfter: history.length,
    };
    emit({
      type: "compaction_done",
      id,
      reason,
      summary: done.summary,
      ...(archiveId ? { archiveId } : {}),
      messagesBefore: done.messagesBefore,
      messagesAfter: done.messagesAfter,
      ...(summary.usage ? { usage: summary.usage } : {}),
    });
    return done;
  } catch (error) {
    const message = errorText(error);
    emit({ type: "compaction_failed", id, reason, message });
    throw error instanceof CompactionError ? error : new CompactionError(message);
  }
}

/** Stores `history` in place of `before` (the old one archived: its id is returned), once pending writes are done. */
async function swap(
  store: CompactionStore,
  options: CompactHistoryOptions,
  plan: CompactionPlan,
  before: readonly ChatMessage[],
  history: ChatMessage[],
): Promise<string> {
  await options.beforeSwap?.();
  try {
    return await store.replaceMessages(
      options.sessionId,
      history.map((message) => ({ message })),
      { keepCheckpoints: keptCheckpoints(plan, before, history) },
    );
  } catch (error) {
    throw new CompactionError(`The compacted history could not be stored: ${errorText(error)}`);
  }
}

/**
 * Where the checkpoints of the compacted turns go in the new history, so `/rewind` can still restore their files:
 * those of the first turn and of the summarized ones under the first user message (rewinding to it undoes them all),
 * the last turn's under the last user message. None when a `compacted` hook replaced either message.
 */
function keptCheckpoints(
  plan: CompactionPlan,
  before: readonly ChatMessage[],
  after: readonly ChatMessage[],
): CheckpointMove[] {
  const last = plan.tail[0];
  if (!last) return [];
  const [firstAt, lastAt] = [before.indexOf(plan.first), before.indexOf(last)];
  const [firstSeq, lastSeq] = [after.indexOf(plan.first), after.indexOf(last)];
  if (firstAt < 0 || lastAt < 0 || firstSeq < 0 || lastSeq < 0) return [];
  return [
    { from: firstAt, to: lastAt, seq: firstSeq, promptHash: promptHash(plan.first) },
    { from: lastAt, to: lastAt + 1, seq: lastSeq, promptHash: promptHash(last) },
  ];
}
