/**
 * How one prompt turn of a session runs: the user message joins the history, the loop runs over it, and the
 * compaction rules that concern a turn apply where they happen (compaction/policy.ts: compact first when the last
 * request crossed the threshold; compact and run once more when the prompt was too long). The session (session.ts)
 * owns the state and decides when a turn may start; this file is what happens inside one.
 */
import { randomUUID } from "node:crypto";

import type { CrowEvent, PromptResult } from "../api/types.js";
import { type Compaction, type CompactionReason, retriesAfterCompaction } from "../compaction/index.js";
import type { SessionToolSet } from "../extensions/session-tool-set.js";
import type { HookBus } from "../hooks/bus.js";
import type { LlmClient, RequestParams } from "../llm/types.js";
import { driveLoop } from "../loop/loop.js";
import type { LoopSettings } from "../loop/settings.js";
import type { LoopEvent, TurnInbox } from "../loop/types.js";
import { addUsage, type ChatMessage, type ContentPart, type ToolOutcome, type Usage } from "../messages.js";

/** The configured request params with the session's `reasoning_effort` (a provider field: it goes in `extra`). */
export function withReasoningEffort(params: RequestParams | undefined, effort: string | undefined) {
  if (effort === undefined) return params;
  return { ...params, extra: { ...params?.extra, reasoning_effort: effort } };
}

/**
 * What keeps a session busy, one at a time: a prompt turn, or work between turns (compact, clear, rewind). Cancelling
 * the session aborts it.
 */
export interface SessionWork {
  controller: AbortController;
  cancelled: boolean;
  /** A prompt turn's steers (steering.ts); none for work between turns. */
  steering?: TurnInbox;
}

/** What a turn needs of its session. */
export interface TurnSession {
  readonly id: string;
  readonly history: ChatMessage[];
  readonly systemPrompt: string;
  readonly tools: SessionToolSet;
  readonly bus: HookBus;
  readonly compaction: Compaction;
  /** Queues the `message` hook for a message now part of the history; resolves when it has run. */
  record(message: ChatMessage, usage?: Usage, outcome?: ToolOutcome): Promise<void>;
  /** Resolves once every `message` hook queued so far has run. */
  flush(): Promise<void>;
  /** Compaction inside a turn; false when nothing was compacted (a failure is reported, the turn goes on). */
  compactWithin(signal: AbortSignal, reason: CompactionReason): Promise<boolean>;
  /** Hands an event of the turn to the session's one event stream (its subscribers, the prompt's run among them). */
  publish(event: CrowEvent): void;
}

/** The model a turn runs on, and the loop's settings (passed to the loop unchanged). */
export interface TurnModel {
  llm: LlmClient;
  model: string;
  settings: LoopSettings;
}

/** The context-overflow rule (compaction/policy.ts) on a turn's outcome: compact, then run the loop once more. */
function retries(outcome: PromptResult): boolean {
  return outcome.stopReason === "error" && retriesAfterCompaction(outcome.error);
}

function textOf(message: ChatMessage): string {
  if (message.role !== "assistant") return "";
  return message.content ?? "";
}

/**
 * One prompt turn. The history keeps the user message and everything the loop appended, so it is valid on every
 * exit; the turn answers once the `message` hooks ran (a client may load the session right after).
 */
export async function runPromptTurn(
  session: TurnSession,
  target: TurnModel,
  content: string | ContentPart[],
  turn: SessionWork,
  /** The prompt as the host received it, kept with the user message (`original`). */
  original?: unknown,
): Promise<PromptResult> {
  const id = randomUUID();
  const user: ChatMessage =
    original === undefined ? { role: "user", id, content } : { role: "user", id, content, original };
  session.history.push(user);
  void session.record(user); // ordered before every later write, which the loop may await
  // The threshold rule: compact first, with this prompt as the latest user message.
  if (session.compaction.due()) {
    // Its events come after `prompt()` returned (the loop's come after an await too): a session listener added
    // right after `prompt()` sees every event of the turn (the run itself subscribed before the turn started).
    await Promise.resolve();
    await session.compactWithin(turn.controller.signal, "threshold");
  }
  const first = await runLoopOnce(session, target, turn, true);
  let outcome = first;
  if (retries(first) && !turn.cancelled) {
    // The context-overflow rule: compact, then run the turn once more.
    if (await session.compactWithin(turn.controller.signal, "context_length")) {
      const second = await runLoopOnce(session, target, turn, false);
      outcome = {
        ...second,
        messages: [...first.messages, ...second.messages],
        ...(addUsage(first.usage, second.usage) ? { usage: addUsage(first.usage, second.usage) } : {}),
      };
    } else {
      session.publish(stopEvent(first));
    }
  }
  await session.flush();
  const messages = [user, ...outcome.messages];
  const last = [...outcome.messages].reverse().find((m) => textOf(m) !== "");
  // The race: a cancel that lands after the loop decided otherwise still answers `cancelled`.
  const stopReason = turn.cancelled ? "cancelled" : outcome.stopReason;
  const result: PromptResult = { ...outcome, stopReason, messages, text: last ? textOf(last) : "" };
  if (stopReason !== "error") delete result.error;
  return result;
}

function stopEvent(outcome: PromptResult): LoopEvent {
  return {
    type: "stop",
    reason: outcome.stopReason,
    messages: outcome.messages,
    ...(outcome.usage ? { usage: outcome.usage } : {}),
    ...(outcome.lastUsage ? { lastUsage: outcome.lastUsage } : {}),
    ...(outcome.error ? { error: outcome.error } : {}),
  };
}

/**
 * One run of the loop over the current history. With `mayRetry`, a `stop` caused by a context-length error is
 * held back (the turn is about to compact and retry, and listeners should see one stop only).
 */
async function runLoopOnce(
  session: TurnSession,
  target: TurnModel,
  turn: SessionWork,
  mayRetry: boolean,
): Promise<PromptResult> {
  let outcome: PromptResult = { stopReason: "end_turn", text: "", messages: [] };
  await driveLoop(
    { messages: [{ role: "system", content: session.systemPrompt }, ...session.history] },
    {
      ...target.settings,
      llm: target.llm,
      model: target.model,
      tools: session.tools,
      hooks: session.bus.loopHooks(),
      signal: turn.controller.signal,
      sessionId: session.id,
      ...(turn.steering ? { steering: turn.steering } : {}),
      onAppend: (message, usage, outcome) => session.record(message, usage, outcome),
    },
    (event) => {
      if (event.type === "message_appended") session.history.push(event.message);
      if (event.type === "stop") {
        outcome = { stopReason: event.reason, text: "", messages: [...event.messages] };
        if (event.error) outcome.error = event.error;
        if (event.usage) outcome.usage = event.usage;
        if (event.lastUsage) outcome.lastUsage = event.lastUsage;
        if (mayRetry && retries(outcome)) return;
      }
      session.publish(event);
    },
  );
  return outcome;
}
