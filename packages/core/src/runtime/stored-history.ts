/** Sessions between the runtime and the store: a stored history as `loadSession` resumes it, a live session as a record. */
import { storedPromptTokens } from "../compaction/index.js";
import { type ChatMessage, repairToolPairs } from "../messages.js";
import type { SessionRecord, Store } from "../store/types.js";
import type { CrowSessionImpl } from "./session.js";

export interface StoredHistory {
  history: ChatMessage[];
  /** The stored history's prompt size, which the threshold rule reads (see `storedPromptTokens`). */
  lastPromptTokens?: number;
}

export async function loadStoredHistory(store: Store, sessionId: string): Promise<StoredHistory> {
  const stored = await store.loadMessages(sessionId);
  // A crash may have left tool calls without results: the loop would send an invalid history.
  const history = repairToolPairs(stored.map((m) => m.message));
  const lastPromptTokens = storedPromptTokens(stored);
  return lastPromptTokens !== undefined ? { history, lastPromptTokens } : { history };
}

/** A store-less session's listing row. */
export function recordOf(session: CrowSessionImpl): SessionRecord {
  const now = new Date().toISOString();
  return {
    id: session.id,
    cwd: session.cwd,
    title: session.title,
    mode: session.mode,
    model: session.model ?? null,
    promptId: null,
    promptArgs: null,
    systemPrompt: session.systemPrompt,
    toolDefinitions: null,
    requestParams: session.reasoningEffort ? { reasoning_effort: session.reasoningEffort } : null,
    parentId: session.parentId ?? null,
    archivedFrom: null,
    forkedFrom: null,
    additionalDirectories: [...session.additionalDirectories],
    createdAt: now,
    updatedAt: now,
  };
}
