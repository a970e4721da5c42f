/**
 * The sandbox policy of a session, from its mode and config.yaml's `sandbox:` (docs/security.md "Sandbox"): what the built-in
 * crow-mcp's shell and write/edit may do. Computed again for every call, so a mode change applies to the next one.
 */
import type { PermissionMode } from "@crow/core";
import {
  latestSandboxAnswer,
  probeSandbox,
  type SandboxPolicy,
  sandboxAvailability,
  UNCONFINED,
} from "@crow/mcp/sandbox";
import type { SandboxConfig } from "../config/types.js";

/** What the agent knows to pick a session's policy. */
export interface SandboxSettings {
  config: SandboxConfig;
  /** Crow's own configuration and extension directories: read-only even when inside a writable root. */
  protectedDirs: string[];
  /** Files commands must not read (Crow's .env and config.yaml: provider keys). */
  hidden: string[];
}

/** Thrown by {@link checkSandbox} when `sandbox: required` and bubblewrap cannot confine commands here. */
export class SandboxUnavailableError extends Error {}

/**
 * Starts checking whether bubblewrap works here, in the background (a bwrap child process), unless the sandbox is
 * off: the agent calls it when it starts, so the answer is ready when the first session opens instead of that
 * session waiting for the check (~10 ms, more on a busy machine, when it ran synchronously).
 */
export function startSandboxCheck(config: SandboxConfig): void {
  if (config.enabled !== "off") void probeSandbox();
}

/**
 * Whether this session's commands will be confined: undefined when they will (or the user turned the sandbox off),
 * else the notice to show once (sandbox: auto). Rejects with {@link SandboxUnavailableError} with `sandbox: required`.
 */
export async function checkSandbox(config: SandboxConfig): Promise<string | undefined> {
  if (config.enabled === "off") return undefined;
  const available = await probeSandbox();
  if (available.ok) return undefined;
  // No verdict yet: commands stay confined or are refused (crow-mcp checks again before each shell), never unconfined.
  if (available.undecided) return `Sandbox: ${available.reason}`;
  if (config.enabled === "required") {
    throw new SandboxUnavailableError(`sandbox: required in config.yaml, but ${available.reason}`);
  }
  return `Sandbox: ${available.reason}`;
}

/** Sessions whose user turned the sandbox off (the editor's "Sandbox" switch, under `sandbox: auto`). */
const switchedOff = new Set<string>();

/**
 * Whether a session can switch its sandbox (the editor's boolean "Sandbox" option): only under `sandbox: auto` with a
 * usable bubblewrap (`required` cannot be turned off; `off` or no bubblewrap has nothing to switch on).
 */
export function sandboxSwitchable(config: SandboxConfig): boolean {
  return config.enabled === "auto" && sandboxAvailability().ok;
}

/**
 * The description of the editor's "Sandbox" option: what confines commands and, when Crow runs as root, that the
 * sandbox was checked to hold (the probe found no capability inside; otherwise the option is not offered at all).
 */
export function sandboxOptionDescription(): string {
  const available = sandboxAvailability();
  const root = available.ok && available.root ? " Run as root: every capability is dropped inside (checked)." : "";
  return `Commands run confined (bubblewrap): writes only in the workspace and /tmp, nothing in read-only mode; .git, .agents, .crow and skills-lock.json read-only.${root} Off: unconfined.`;
}

/** The session's "Sandbox" switch. */
export function sessionSandboxOn(sessionId: string): boolean {
  return !switchedOff.has(sessionId);
}

/** Sets the session's "Sandbox" switch: its next command runs under the resulting policy. */
export function setSessionSandbox(sessionId: string, on: boolean): void {
  if (on) switchedOff.delete(sessionId);
  else switchedOff.add(sessionId);
}

/**
 * The policy for session `sessionId` in `mode`, whose workspace is `roots` (its cwd, then its additional directories:
 * all writable in workspace-write mode), or just its cwd.
 */
export function sandboxPolicy(
  settings: SandboxSettings,
  mode: PermissionMode,
  roots: string | readonly string[],
  sessionId?: string,
): SandboxPolicy {
  const { config } = settings;
  if (config.enabled === "off") return UNCONFINED;
  // Unconfined only on the verdict that bubblewrap cannot confine here. Without one (the check did not finish, on a
  // machine busy enough), the policy stands: crow-mcp checks again before it starts a shell and refuses commands
  // until a check passes. This runs at every command: after the first check it only reads the latest answer, and
  // an undecided one is checked again in the background.
  const known = latestSandboxAnswer() ?? sandboxAvailability();
  if (!known.ok && !known.undecided) return UNCONFINED;
  if (!known.ok) void probeSandbox();
  if (sessionId !== undefined && config.enabled === "auto" && !sessionSandboxOn(sessionId)) return UNCONFINED;
  if (mode === "read-only") {
    return { mode: "read-only", writable: [], readOnly: [], network: config.network ?? false, hidden: settings.hidden };
  }
  return {
    mode: "workspace-write",
    writable: [...(typeof roots === "string" ? [roots] : roots), ...config.writable],
    readOnly: settings.protectedDirs,
    network: config.network ?? true,
    hidden: settings.hidden,
  };
}
