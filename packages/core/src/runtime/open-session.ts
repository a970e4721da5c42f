/**
 * Opening a live session (new or stored): its tool set over the extensions' tools, its parts (session-parts.ts),
 * its compaction, then the extensions' session setups. The runtime (crow.ts) decides what to open; this builds it.
 */

import type { Crow, NewSessionOptions } from "../api/types.js";
import type { SessionCompactions } from "../compaction/index.js";
import type { Logger } from "../extensions/api.js";
import type { ExtensionRegistry } from "../extensions/registry.js";
import { SessionToolSet } from "../extensions/session-tool-set.js";
import type { LlmClient } from "../llm/types.js";
import type { LoopSettings } from "../loop/settings.js";
import type { ChatMessage } from "../messages.js";
import type { SessionRecord, Store } from "../store/types.js";
import type { ToolSet } from "../tools.js";
import type { RuntimeLeases } from "./leases.js";
import type { RuntimeOptions } from "./options.js";
import type { Rewinder } from "./rewinder.js";
import { CrowSessionImpl } from "./session.js";

/** The fields of a session's record that opening it needs (stored, or made up when there is no store). */
export type RecordToOpen = Pick<
  SessionRecord,
  "id" | "cwd" | "title" | "mode" | "model" | "requestParams" | "additionalDirectories"
> & { parentId?: string | null };

/** What the session starts with besides its record. */
export interface OpeningState {
  history: ChatMessage[];
  systemPrompt: string;
  tools: ToolSet | undefined;
  askPermission: NewSessionOptions["askPermission"];
  askUser: NewSessionOptions["askUser"];
  resumed: boolean;
  /** Problems found while preparing it, shown when it opens (a user prompt template that failed). */
  problems?: string[];
  /** The stored history's last prompt size (see stored-history.ts). */
  lastPromptTokens?: number;
}

/** The runtime's side of every session it opens. */
export interface RuntimeParts {
  crow: Crow;
  options: RuntimeOptions;
  registry: ExtensionRegistry;
  llm: LlmClient | undefined;
  loop: LoopSettings;
  store: Store | undefined;
  logger: Logger;
  rewinder: Rewinder;
  /** The live sessions by id: the session joins it here and leaves it when it closes. */
  live: Map<string, CrowSessionImpl>;
  /** The compaction threshold for a model (compaction/policy.ts's thresholdFor over the runtime's options). */
  threshold: (model: string | undefined) => number;
  /** Each live session's compaction, as the built-in watcher finds it. */
  compactions: SessionCompactions;
  /** The sessions' leases in the store (one live owner per session); none without a store. */
  leases: RuntimeLeases | undefined;
}

/** Opens a session on `record`: built, registered as live, its extensions' setups run and `session_start` emitted. */
export async function openLiveSession(
  parts: RuntimeParts,
  record: RecordToOpen,
  init: OpeningState,
): Promise<CrowSessionImpl> {
  const { crow, options, registry, store, live } = parts;
  const models = options.models ?? [];
  let session: CrowSessionImpl | undefined;
  const mode = record.mode === "code" || record.mode === "ask" || record.mode === "read-only" ? record.mode : undefined;
  // A stored model that is no longer known falls back to the default.
  const known = record.model && (models.length === 0 || models.some((m) => m.name === record.model));
  // The session's own request settings (the reasoning effort picked in the editor).
  const effort = record.requestParams?.reasoning_effort;
  const tools = new SessionToolSet(registry.tools, init.tools, () => {
    if (!session) throw new Error("the session is not open yet");
    return { session, crow };
  });
  session = new CrowSessionImpl({
    id: record.id,
    cwd: record.cwd,
    additionalDirectories: record.additionalDirectories,
    ...(record.parentId ? { parentId: record.parentId } : {}),
    crow,
    registry,
    llm: parts.llm,
    model: known ? (record.model ?? undefined) : options.model,
    ...(typeof effort === "string" ? { reasoningEffort: effort } : {}),
    mode: mode ?? options.mode ?? "code",
    history: init.history,
    systemPrompt: init.systemPrompt,
    title: record.title,
    tools,
    ...(init.askPermission ? { askPermission: init.askPermission } : {}),
    ...(init.askUser ? { askUser: init.askUser } : {}),
    makeCompaction: (s) =>
      parts.compactions.open(s, {
        sessionId: record.id,
        threshold: () => parts.threshold(s.model),
        ...(store ? { store } : {}),
        beforeSwap: () => s.flush(),
        // Extensions' `compacted` hooks (the todo extension keeps the plan in the compacted history).
        rewrite: (event, signal) => s.bus.transformCompacted(event, { sessionId: record.id, signal }),
      }),
    loop: parts.loop,
    logger: parts.logger,
    ...(store ? { clearStored: (id: string) => (store as Store).replaceMessages(id, [], { kind: "clear" }) } : {}),
    rewinder: parts.rewinder,
    onClose: async (s) => {
      if (live.get(s.id) !== s) return;
      live.delete(s.id);
      await parts.leases?.release(s.id);
    },
  });
  if (init.lastPromptTokens !== undefined) session.compaction.observe(init.lastPromptTokens);
  live.set(record.id, session);
  await session.start(init.resumed, init.problems);
  return session;
}
