/**
 * Compaction on the ACP side: how the client hears about a compaction (a `compaction_update` when it advertised
 * `session.compaction`, else a `notice` when it advertised `session.notices`, else a short agent message), and the
 * `_crow/compact {sessionId}` extension method (advertised in `initialize` `_meta.crow.methods`).
 */
import { type AgentApp, type ClientCapabilities, RequestError, type SessionUpdate } from "@agentclientprotocol/sdk";
import type { CompactionEvent, CompactionResult } from "@crow/core";
import { compactedText } from "../session/compaction.js";
import { TurnBusyError } from "../session/modes.js";
import { messageChunk } from "./translate.js";

/** The custom method that compacts a session on request. */
export const COMPACT_METHOD = "_crow/compact";

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
  const session = capabilities?.session;
  if (session?.compaction) {
    switch (event.type) {
      case "compaction_started":
        return [{ sessionUpdate: "compaction_update", compactionId: event.id, status: "in_progress" }];
      case "compaction_done":
        return [
          {
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
          },
        ];
      case "compaction_failed":
        return [{ sessionUpdate: "compaction_update", compactionId: event.id, status: "failed", error: event.message }];
    }
  }
  if (event.type === "compaction_started") return [];
  // A manual compaction is answered by its command or method; the fallbacks below are for automatic ones.
  if (event.reason === "manual") return [];
  if (session?.notices) {
    return event.type === "compaction_done"
      ? [
          {
            sessionUpdate: "notice",
            severity: "info",
            title: "Conversation compacted",
            description: `${compactedText(event.messagesBefore, event.messagesAfter, event.archiveId)} (${WHY[event.reason]})`,
          },
        ]
      : [{ sessionUpdate: "notice", severity: "warning", title: "Compaction failed", description: event.message }];
  }
  return event.type === "compaction_done"
    ? [
        messageChunk(
          `[Compacted the conversation because ${WHY[event.reason]}: ${event.messagesBefore} messages → ${event.messagesAfter}.]\n\n`,
        ),
      ]
    : [messageChunk(`[Compaction failed: ${event.message}]\n\n`)];
}

/** The answer of `_crow/compact`. */
export interface CompactResponse {
  compacted: boolean;
  /** What happened, for people. */
  message: string;
  /** The stored summary (when compacted). */
  summary?: string;
  /** The archive holding the previous history. */
  archiveId?: string;
  messagesBefore?: number;
  messagesAfter?: number;
}

function parseCompactParams(params: unknown): { sessionId: string } {
  const sessionId = (params as { sessionId?: unknown } | null)?.sessionId;
  if (typeof sessionId !== "string" || sessionId === "") {
    throw RequestError.invalidParams(undefined, `${COMPACT_METHOD} expects {"sessionId": "<id>"}`);
  }
  return { sessionId };
}

function response(result: CompactionResult): CompactResponse {
  if (!result.compacted) return { compacted: false, message: result.message };
  return {
    compacted: true,
    message: compactedText(result.messagesBefore, result.messagesAfter, result.archiveId),
    summary: result.summary,
    ...(result.archiveId ? { archiveId: result.archiveId } : {}),
    messagesBefore: result.messagesBefore,
    messagesAfter: result.messagesAfter,
  };
}

/** Registers `_crow/compact` on the app; `find` resolves a live session (throwing sessionNotFound otherwise). */
export function registerCompactMethod(
  app: AgentApp,
  find: (sessionId: string) => { session: { compact(): Promise<CompactionResult> } },
): AgentApp {
  return app.onRequest<{ sessionId: string }, CompactResponse>(
    COMPACT_METHOD,
    parseCompactParams,
    async ({ params }) => {
      const { session } = find(params.sessionId);
      try {
        return response(await session.compact());
      } catch (error) {
        if (error instanceof TurnBusyError) throw RequestError.invalidRequest(undefined, error.message);
        throw new RequestError(-32603, error instanceof Error ? error.message : String(error));
      }
    },
  );
}
