/**
 * Compaction planning, pure: which part of a history is summarized and what the history becomes.
 *
 * The history `[first user, …middle…, last user, …tail…]` becomes `[first user, summary, last user, …tail…]`: the
 * task as the user first stated it, a summary of everything in between, and the current request with whatever the
 * running turn already did. Cuts fall on user messages only, so every assistant tool call keeps its tool results on
 * the same side of a cut: the compacted history satisfies the tool-call invariant whenever the input did.
 */
import type { AssistantMessage, ChatMessage, SystemMessage, UserMessage } from "../messages.js";

export interface CompactionPlan {
  /** Leading system message(s), kept as they are (a session's history usually has none; requests do). */
  system: SystemMessage[];
  first: UserMessage;
  /** What gets summarized: everything after the first user message and before the last one. */
  middle: ChatMessage[];
  /** The last user message and everything after it, kept verbatim. */
  tail: ChatMessage[];
}

/** Why a history cannot be compacted. */
export type NothingToCompact = { reason: "no_user_message" | "single_turn" | "nothing_between" };

/**
 * Plans the compaction of `history` (with or without leading system messages). Returns the reason instead of a
 * plan when there is nothing to summarize: no user message, one user message only, or nothing between the first
 * and the last user message.
 */
export function planCompaction(history: readonly ChatMessage[]): CompactionPlan | NothingToCompact {
  let start = 0;
  const system: SystemMessage[] = [];
  while (history[start]?.role === "system") system.push(history[start++] as SystemMessage);
  const firstAt = history.findIndex((m, i) => i >= start && m.role === "user");
  if (firstAt === -1) return { reason: "no_user_message" };
  let lastAt = -1;
  for (let i = history.length - 1; i > firstAt; i--) {
    if (history[i]?.role === "user") {
      lastAt = i;
      break;
    }
  }
  if (lastAt === -1) return { reason: "single_turn" };
  const middle = history.slice(firstAt + 1, lastAt);
  if (middle.length === 0) return { reason: "nothing_between" };
  return {
    system,
    first: history[firstAt] as UserMessage,
    // Anything before the first user message (it should not exist) is summarized rather than lost.
    middle: [...history.slice(start, firstAt), ...middle],
    tail: history.slice(lastAt),
  };
}

/** The message that stands for the summarized span: the summarizer's text as it returned it. */
export function summaryMessage(summary: string): AssistantMessage {
  return { role: "assistant", content: summary };
}

/** The compacted history: `[system…, first user, summary, last user, …tail]`. */
export function compactedHistory(plan: CompactionPlan, summary: string): ChatMessage[] {
  return [...plan.system, plan.first, summaryMessage(summary), ...plan.tail];
}

/** A human-readable reason for {@link NothingToCompact}. */
export function nothingToCompactMessage(result: NothingToCompact): string {
  switch (result.reason) {
    case "no_user_message":
      return "Nothing to compact: the conversation is empty.";
    case "single_turn":
      return "Nothing to compact yet: the conversation has a single user message.";
    case "nothing_between":
      return "Nothing to compact: there is nothing between the first and the last user message.";
  }
}
