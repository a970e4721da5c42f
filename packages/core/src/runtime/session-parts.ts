/** What a live session is made of: the runtime (open-session.ts) builds it, `CrowSessionImpl` (session.ts) runs on it. */
import type { PermissionAnswer, PermissionMode, PermissionRequest } from "../api/permissions.js";
import type { Crow, CrowSession } from "../api/types.js";
import type { UserAsker } from "../api/user-question.js";
import type { Compaction } from "../compaction/index.js";
import type { Logger } from "../extensions/api.js";
import type { ExtensionRegistry } from "../extensions/registry.js";
import type { SessionToolSet } from "../extensions/session-tool-set.js";
import type { HookBus } from "../hooks/bus.js";
import type { LlmClient } from "../llm/types.js";
import type { LoopSettings } from "../loop/settings.js";
import type { ChatMessage } from "../messages.js";
import type { Rewinder } from "./rewinder.js";

/** What the session's compaction needs of the session (the runtime session itself). */
export interface CompactionHost {
  readonly model: string | undefined;
  readonly bus: HookBus;
  flush(): Promise<void>;
}

/** Everything a live session is made of (the runtime builds it when it opens a new or stored session). */
export interface SessionParts {
  id: string;
  cwd: string;
  additionalDirectories?: readonly string[];
  parentId?: string;
  crow: Crow;
  registry: ExtensionRegistry;
  llm: LlmClient | undefined;
  model: string | undefined;
  /** The stored `reasoning_effort` choice, if any. */
  reasoningEffort?: string;
  mode: PermissionMode;
  history: ChatMessage[];
  systemPrompt: string;
  title: string | null;
  tools: SessionToolSet;
  askPermission?: (request: PermissionRequest) => Promise<PermissionAnswer>;
  askUser?: UserAsker;
  makeCompaction: (session: CompactionHost) => Compaction;
  /** The runtime's loop settings, handed to every turn's loop unchanged. */
  loop: LoopSettings;
  logger: Logger;
  /** Archives the stored history and empties it (`/clear`); undefined without a store. */
  clearStored?: (sessionId: string) => Promise<string>;
  /** `rewind`/`rewindPoints` (rewinder.ts). */
  rewinder: Rewinder;
  /** Called once the session is closed (the runtime forgets it). */
  /** Awaited last when the session closes (the runtime forgets it and releases its lease). */
  onClose: (session: CrowSession) => void | Promise<void>;
}
