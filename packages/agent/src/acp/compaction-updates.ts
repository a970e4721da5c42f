/**
 * Compaction on the ACP side: how the client hears about a compaction (a `compaction_update` when it advertised
 * `session.compaction`, else a `notice` when it advertised `session.notices`, else a short agent message). The
 * `_crow/compact` method itself is a built-in extension of the runtime (core).
 */
import type { ClientCapabilities, SessionUpdate } from "@agentclientprotocol/sdk";
import type { CompactionEvent } from "@crow/core";
import { compactedText } from "@crow/core/internal";
import { compactionCompleted, compactionUpdate, noticeUpdates } from "./translate.js";

const WHY: Record<CompactionEvent["reason"], string> = {
  threshold: "the context was getting full",
  context_length: "the model said the context was too long",
  manual: "on request",
};

/** The updates that tell the client about `event`, by what it supports. */
export function compactionUpdates(
  event: CompactionEvent,
  capabilities: ClientCapabilities | undefined,
): SessionUpdate[] {
  if (capabilities?.session?.compaction) {
    switch (event.type) {
      case "compaction_started":
        return [compactionUpdate(event.id, "in_progress")];
      case "compaction_done":
        return [compactionCompleted(event)];
      case "compaction_failed":
        return [compactionUpdate(event.id, "failed", event.message)];
    }
  }
  if (event.type === "compaction_started") return [];
  // A manual compaction is answered by its command or method; the fallbacks below are for automatic ones.
  if (event.reason === "manual") return [];
  return event.type === "compaction_done"
    ? noticeUpdates(
        capabilities,
        {
          severity: "info",
          title: "Conversation compacted",
          description: `${compactedText(event.messagesBefore, event.messagesAfter, event.archiveId)} (${WHY[event.reason]})`,
        },
        `[Compacted the conversation because ${WHY[event.reason]}: ${event.messagesBefore} message${event.messagesBefore === 1 ? "" : "s"} → ${event.messagesAfter}.]\n\n`,
      )
    : noticeUpdates(
        capabilities,
        { severity: "warning", title: "Compaction failed", description: event.message },
        `[Compaction failed: ${event.message}]\n\n`,
      );
}
