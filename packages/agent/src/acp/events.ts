/**
 * The runtime's session events as `session/update`s: compaction (compaction-updates.ts decides by client capability), the
 * title (`session_info_update`), notices from the runtime and extensions (a `notice` when the client advertised
 * `session.notices`, else a bracketed agent message), mode changes (`current_mode_update`) and the plan (`plan`).
 */
import type { ClientCapabilities, SessionUpdate } from "@agentclientprotocol/sdk";
import type { SessionEvent } from "@crow/core";
import { compactionUpdates } from "./compaction-updates.js";
import { modeUpdate, noticeUpdates, planUpdate, sessionInfoUpdate } from "./translate.js";

/** The updates that tell the client about a session event. */
export function sessionEventUpdates(
  event: SessionEvent,
  capabilities: ClientCapabilities | undefined,
): SessionUpdate[] {
  switch (event.type) {
    case "compaction_started":
    case "compaction_done":
    case "compaction_failed":
      return compactionUpdates(event, capabilities);
    case "title":
      return [sessionInfoUpdate(event.title, event.updatedAt)];
    case "notice":
      return noticeUpdates(
        capabilities,
        { severity: event.level, title: "Crow", description: event.message },
        `\n[${event.message}]\n`,
      );
    case "mode":
      return [modeUpdate(event.mode)];
    // Shown by the config options (the session, acp-session.ts, sends config_option_update on these).
    case "model":
    case "reasoning_effort":
      return [];
    case "plan":
      return [planUpdate(event.entries)];
  }
}
