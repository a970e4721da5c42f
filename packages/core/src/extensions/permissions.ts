import type { HookBus } from "../hooks/bus.js";
import type { HookHandlers } from "../hooks/types.js";
import type { ToolDefinition } from "../messages.js";
import { isMutatingKind, type ToolCallRequest, type ToolKind, toolKind } from "../tools.js";

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
  /** Asks the user (ACP `session/request_permission`). Without it, or if it fails, `ask` mode rejects. */
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

/**
 * The permission modes as a `before_tool_call` gate. Mutating tools are those whose kind edits, deletes, moves or
 * executes (write, edit, terminal…) and tools of kind `other` that do not declare themselves read-only.
 * - `code`: everything runs.
 * - `ask`: mutating calls wait for `askPermission`; "allow_always" is remembered per tool for this handle's life
 *   (one handle per session).
 * - `read-only`: mutating calls are refused with a tool result saying why.
 */
export function installPermissions(bus: HookBus, options: PermissionOptions = {}): Permissions {
  let mode: PermissionMode = options.mode ?? "code";
  const gate = permissionGate({ ...options, mode: () => mode });
  const dispose = bus.on("before_tool_call", gate.gate, { name: "permissions" });

  return {
    get mode() {
      return mode;
    },
    setMode(next) {
      mode = next;
    },
    isMutating: gate.isMutating,
    forget: gate.forget,
    dispose,
  };
}

/** The permission gate of one session, for hosts that keep the mode elsewhere (the runtime's built-in extension). */
export interface PermissionGate {
  gate: HookHandlers["before_tool_call"];
  isMutating(toolName: string): boolean;
  /** Forgets the "allow always" answers. */
  forget(): void;
}

/** Builds the `before_tool_call` gate of {@link installPermissions} over a mode read on every call. */
export function permissionGate(
  options: Omit<PermissionOptions, "mode"> & { mode: () => PermissionMode },
): PermissionGate {
  const alwaysAllowed = new Set<string>();
  const mutating = (name: string, kind: ToolKind): boolean =>
    isMutatingKind(kind) || (kind === "other" && options.isReadOnly?.(name) !== true);
  const isMutating = (name: string): boolean => mutating(name, toolKind(name));
  const gate: HookHandlers["before_tool_call"] = async ({ call, kind, definition }, ctx) => {
    const mode = options.mode();
    const name = definition.function.name;
    // The event's kind is the declared one when the tool has one (in-process tools), else derived from the name.
    if (mode === "code" || !mutating(name, kind)) return undefined;
    if (mode === "read-only") {
      return {
        block: true,
        reason:
          `Refused: "${call.name}" can change files or run commands, and this session is in read-only mode. ` +
          "Use read-only tools, or ask the user to switch to another mode.",
      };
    }
    if (alwaysAllowed.has(name)) return undefined;
    let answer: PermissionAnswer = "reject";
    if (options.askPermission) {
      try {
        const request: PermissionRequest = { call, kind, definition, signal: ctx.signal };
        if (ctx.sessionId !== undefined) request.sessionId = ctx.sessionId;
        answer = await options.askPermission(request);
      } catch {
        // Failing to ask must never mean "allowed".
        answer = ctx.signal.aborted ? "cancelled" : "reject";
      }
    }
    if (answer === "allow_always") alwaysAllowed.add(name);
    if (answer === "allow_once" || answer === "allow_always") return undefined;
    const reason =
      answer === "cancelled"
        ? `The user cancelled the "${call.name}" call before it ran.`
        : `The user rejected this "${call.name}" call; it was not run. Do not retry it unchanged; ask the user how to proceed if unsure.`;
    return { block: true, reason };
  };
  return { gate, isMutating, forget: () => alwaysAllowed.clear() };
}
