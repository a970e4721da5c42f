/** The permission vocabulary shared by the runtime's public types and the permission extension. */
import type { ToolDefinition } from "../messages.js";
import type { ResolvedTool, ToolCallRequest, ToolDisplay, ToolKind } from "../tools.js";

/** Session modes (DESIGN.md §3). */
export type PermissionMode = "code" | "ask" | "read-only";

/** The user's answer to a permission request (ACP permission option kinds, plus cancelled). */
export type PermissionAnswer = "allow_once" | "allow_always" | "reject" | "cancelled";

/** What `askPermission` receives. */
export interface PermissionRequest {
  call: ToolCallRequest;
  kind: ToolKind;
  definition: ToolDefinition;
  /** The tool the call resolved to, when the loop asks (hosts show its `display`). */
  tool?: ResolvedTool;
  /**
   * What the call would change (a write's or edit's diff), from the tool's dry run (`propose`), which the permission
   * gate ran once for this question: hosts show this and do not call `propose` again (a second dry run costs a
   * second pass of the edit engine and could show another change). Absent when the tool has none or cannot tell.
   */
  proposal?: ToolDisplay;
  sessionId?: string;
  /** Aborted when the turn is cancelled: answer "cancelled". */
  signal: AbortSignal;
  /**
   * Why this call asks although the mode alone would not, for people: an `ask` rule (`the permission rule
   * "terminal(git push*)"`) or the doom-loop guard (the same call again). Absent for the mode's own questions.
   */
  reason?: string;
  /**
   * Allowing runs the call outside the sandbox. A client that approves every question on its own (`crow run --yes`)
   * must still ask a person, or refuse: confinement is never given up without someone saying so.
   */
  unconfined?: boolean;
}
