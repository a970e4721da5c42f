import type { PermissionAnswer, PermissionMode, PermissionRequest } from "../api/permissions.js";
import { errorText } from "../error-text.js";
import type { HookBus } from "../hooks/bus.js";
import type { HookHandlers } from "../hooks/types.js";
import {
  isMutatingKind,
  type ResolvedTool,
  type ToolCallRequest,
  type ToolDisplay,
  type ToolKind,
  toolKind,
} from "../tools.js";
import {
  compilePermissionRules,
  matchPermissionRule,
  type PermissionRule,
  type PermissionRules,
} from "./permission-rules.js";

/** Options of `installPermissions`. */
export interface PermissionOptions {
  mode?: PermissionMode;
  /** Asks the user (ACP `session/request_permission`). Without it, or if it fails, `ask` mode rejects. */
  askPermission?: (request: PermissionRequest) => Promise<PermissionAnswer>;
  /** The tool's own read-only claim (MCP `readOnlyHint`) when known; decides for tools of kind `other`. */
  isReadOnly?: (toolName: string) => boolean | undefined;
  /**
   * Whether the operating system confines the tool to the mode (the sandboxed terminal): read-only mode lets such a
   * call run (its sandbox writes nothing); `ask` still asks.
   */
  isConfined?: (toolName: string) => boolean;
  /** config.yaml's allow / ask / deny rules (see permission-rules.ts); invalid ones throw PermissionRuleError. */
  rules?: PermissionRules;
  /** The session's working directory, for rules with a relative path pattern. */
  cwd?: () => string | undefined;
  /** The session's other workspace roots (additional directories): relative path patterns apply in them too. */
  extraRoots?: () => readonly string[];
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
 * The permission modes and rules as a `before_tool_call` gate. Mutating tools are those whose kind edits, deletes,
 * moves or executes (write, edit, terminal…) and tools of kind `other` that do not declare themselves read-only.
 * In order, the first that applies decides:
 * 1. a `deny` rule matches: refused, with a tool result naming the rule;
 * 2. `read-only` mode and a mutating call: refused (no rule loosens read-only);
 * 3. an `ask` rule matches: the user is asked, in every mode;
 * 4. an `allow` rule matches: it runs, in every mode;
 * 5. the mode: `code` runs everything, `ask` asks for mutating calls, `read-only` runs the rest.
 * "allow_always" is remembered for this handle's life (one handle per session): per rule for a rule's question,
 * per tool for the mode's.
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
  /**
   * Asks the user whether a call another gate would block may run anyway (the doom-loop guard in `ask` mode):
   * a `deny` rule still refuses without asking, and so does a failing dry run (as `gate` does); an allowed call is
   * not asked about again by `gate`. Resolves to the decision: undefined to run, else `{block, reason}` (`reason`
   * when the user says no).
   */
  confirm(
    event: Parameters<HookHandlers["before_tool_call"]>[0],
    ctx: Parameters<HookHandlers["before_tool_call"]>[1],
    why: { question: string; reason: string },
  ): Promise<{ block: true; reason: string } | undefined>;
  isMutating(toolName: string): boolean;
  /** Forgets the "allow always" answers. */
  forget(): void;
}

/** The tool result of a call a `deny` rule refused. */
function deniedReason(call: ToolCallRequest, rule: PermissionRule): string {
  return (
    `Denied: "${call.name}" matches the permission rule "${rule.text}" (permissions.deny in config.yaml), so it ` +
    "was not run. Do not retry it; find another way, or ask the user to run it or to change the rule."
  );
}

type GateEvent = Parameters<HookHandlers["before_tool_call"]>[0];
type GateContext = Parameters<HookHandlers["before_tool_call"]>[1];

/** Builds the `before_tool_call` gate of {@link installPermissions} over a mode read on every call. */
export function permissionGate(
  options: Omit<PermissionOptions, "mode"> & { mode: () => PermissionMode },
): PermissionGate {
  const rules = compilePermissionRules(options.rules ?? {});
  /** "allow always" answers: `tool:<name>` for the mode's questions, `rule:<text>` for an ask rule's. */
  const alwaysAllowed = new Set<string>();
  /** Calls the user already allowed through `confirm` (their `gate` pass must not ask again). */
  const confirmed = new Set<string>();
  // The resolved tool's own claims when the loop carried it; by name otherwise (isMutating, events built by hand).
  const mutating = (name: string, kind: ToolKind, tool?: ResolvedTool): boolean =>
    isMutatingKind(kind) || (kind === "other" && (tool ? tool.readOnly : options.isReadOnly?.(name)) !== true);
  const confined = (name: string, tool?: ResolvedTool): boolean =>
    tool ? tool.confined?.() === true : options.isConfined?.(name) === true;
  const isMutating = (name: string): boolean => mutating(name, toolKind(name));
  const ruleFor = (call: ToolCallRequest, name: string) =>
    rules.length === 0
      ? undefined
      : matchPermissionRule(rules, name, call.args, options.cwd?.(), options.extraRoots?.() ?? []);
  /** Asks (unless "always" was answered for `key`) and turns the answer into the gate's decision. */
  const askFor = async (event: GateEvent, ctx: GateContext, key: string, reason?: string) => {
    if (alwaysAllowed.has(key)) return undefined;
    const dry = await dryRun(event, ctx);
    if ("failure" in dry) return { block: true as const, reason: dry.failure };
    const answer = await askUser(options.askPermission, event, ctx, dry.proposal, reason);
    if (answer === "allow_always") alwaysAllowed.add(key);
    if (answer === "allow_once" || answer === "allow_always") return undefined;
    return userRefusal(event.call, answer);
  };

  const gate: HookHandlers["before_tool_call"] = async (event, ctx) => {
    const { call, kind, definition, tool } = event;
    const mode = options.mode();
    const name = definition.function.name;
    // The event's kind is the declared one when the tool has one (in-process tools), else derived from the name.
    const rule = ruleFor(call, name);
    if (rule?.action === "deny") return { block: true, reason: deniedReason(call, rule) };
    const changes = mutating(name, kind, tool);
    if (mode === "read-only" && changes && !confined(name, tool)) return { block: true, reason: readOnlyReason(call) };
    if (confirmed.delete(call.id)) return undefined;
    if (rule?.action === "ask") return askFor(event, ctx, `rule:${rule.text}`, `the permission rule "${rule.text}"`);
    // Past the refusal above, a mutating call in read-only mode is one the sandbox confines: it runs unasked.
    if (rule?.action === "allow" || mode === "code" || mode === "read-only" || !changes) return undefined;
    return askFor(event, ctx, `tool:${name}`);
  };

  const confirm: PermissionGate["confirm"] = async (event, ctx, why) => {
    const rule = ruleFor(event.call, event.definition.function.name);
    if (rule?.action === "deny") return { block: true, reason: deniedReason(event.call, rule) };
    const dry = await dryRun(event, ctx);
    if ("failure" in dry) return { block: true, reason: dry.failure };
    const answer = await askUser(options.askPermission, event, ctx, dry.proposal, why.question);
    if (answer !== "allow_once" && answer !== "allow_always") {
      return answer === "cancelled" ? userRefusal(event.call, answer) : { block: true, reason: why.reason };
    }
    confirmed.add(event.call.id);
    return undefined;
  };
  return { gate, confirm, isMutating, forget: () => alwaysAllowed.clear() };
}

/** The tool result of a mutating call refused in read-only mode. */
function readOnlyReason(call: ToolCallRequest): string {
  return (
    `Refused: "${call.name}" can change files or run commands, and this session is in read-only mode. ` +
    "Use read-only tools, or ask the user to switch to another mode."
  );
}

/**
 * The user's answer through `askPermission`, shown `proposal` (the gate's one dry run), `reason` saying why they are
 * asked. Without `askPermission`, or when asking fails, the answer is "reject" ("cancelled" once the turn is
 * cancelled): failing to ask never allows.
 */
async function askUser(
  askPermission: PermissionOptions["askPermission"],
  { call, kind, definition, tool }: GateEvent,
  ctx: GateContext,
  proposal: ToolDisplay | undefined,
  reason?: string,
): Promise<PermissionAnswer> {
  if (!askPermission) return "reject";
  try {
    const request: PermissionRequest = { call, kind, definition, signal: ctx.signal, ...(tool ? { tool } : {}) };
    if (proposal) request.proposal = proposal;
    if (ctx.sessionId !== undefined) request.sessionId = ctx.sessionId;
    if (reason !== undefined) request.reason = reason;
    return await askPermission(request);
  } catch {
    // Failing to ask must never mean "allowed".
    return ctx.signal.aborted ? "cancelled" : "reject";
  }
}

/** The gate's decision when the user did not allow `call` (`answer` is "reject" or "cancelled"). */
function userRefusal(call: ToolCallRequest, answer: PermissionAnswer): { block: true; reason: string } {
  return {
    block: true,
    reason:
      answer === "cancelled"
        ? `The user cancelled the "${call.name}" call before it ran.`
        : `The user rejected this "${call.name}" call; it was not run. Do not retry it unchanged; ask the user how to proceed if unsure.`,
  };
}

/**
 * The call's dry run (`propose`: write, edit), run once per question: the change it would make goes on the permission
 * request (`proposal`, what hosts show; they never run it again), and when it says the call would fail, that is the
 * `failure`: then nobody is asked to allow a change that will not happen, and the call is not run (so a file changed
 * in between cannot make it run unasked); the model gets that message. No proposal when the tool has no dry run or
 * cannot tell, or the turn was cancelled (the question then answers "cancelled").
 */
async function dryRun(
  { call, tool }: GateEvent,
  ctx: GateContext,
): Promise<{ failure: string } | { proposal: ToolDisplay | undefined }> {
  if (!tool?.propose) return { proposal: undefined };
  try {
    return { proposal: await tool.propose(call.args, ctx.signal) };
  } catch (error) {
    if (ctx.signal.aborted) return { proposal: undefined };
    return { failure: `Not run (its dry run failed, so the user was not asked): ${errorText(error)}` };
  }
}
