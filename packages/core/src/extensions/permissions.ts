import type { HookBus } from "../hooks/bus.js";
import type { ToolDefinition } from "../messages.js";
import type { ToolCallRequest, ToolKind } from "../tools.js";

/** Session modes (DESIGN.md §3). */
export type PermissionMode = "code" | "ask" | "read-only";

/** The user's answer to a permission request (ACP permission option kinds, plus cancelled). */
export type PermissionAnswer = "allow_once" | "allow_always" | "reject" | "cancelled";

/** What `askPermission` receives. */
export interface PermissionRequest {
  call: ToolCallRequest;
  kind: ToolKind;
  definition: ToolDefinition;
  sessionId?: string;
  /** Aborted when the turn is cancelled: answer "cancelled". */
  signal: AbortSignal;
}

/** Options of `installPermissions`. */
export interface PermissionOptions {
  mode?: PermissionMode;
  /** Asks the user (ACP `session/request_permission`). Without it, `ask` mode rejects mutating calls. */
  askPermission?: (request: PermissionRequest) => Promise<PermissionAnswer>;
  /** The tool's own read-only claim (MCP `readOnlyHint`) when known; decides for tools of kind `other`. */
  isReadOnly?: (toolName: string) => boolean | undefined;
}

/** Handle on the installed permission extension. */
export interface Permissions {
  readonly mode: PermissionMode;
  setMode(mode: PermissionMode): void;
  /** Whether a tool is gated by `ask`/`read-only`. */
  isMutating(toolName: string): boolean;
  /** Forgets the "allow always" answers. */
  forget(): void;
  /** Unregisters the hook. */
  dispose(): void;
}

export function installPermissions(_bus: HookBus, _options: PermissionOptions = {}): Permissions {
  throw new Error("not implemented yet");
}
