/**
 * What the operating system lets the terminal's shell (and, in-process, the write and edit tools) do: the sandbox
 * policy of one MCP session. The agent sends it in `initialize`'s `_meta["crow/sandbox"]` (and again in each tool
 * call's `_meta`, so a mode change applies to the next call); standalone crow-mcp takes `--sandbox`.
 */
import path from "node:path";

/** Key of the policy in `initialize`'s and `tools/call`'s `_meta`. */
export const SANDBOX_META_KEY = "crow/sandbox";

/**
 * `_meta` key of a terminal call the user allowed to run once outside the sandbox (after the sandbox blocked it in
 * `ask` mode): `true` runs the command in a separate, unconfined one-off shell in the terminal's current directory.
 */
export const UNSANDBOXED_META_KEY = "crow/unsandboxed";

/**
 * - `workspace-write`: the shell may write only under `writable` and its private /tmp;
 * - `read-only`: commands run, but only the private /tmp is writable;
 * - `off`: no confinement (the user turned it off, or it is not available here).
 */
export type SandboxMode = "workspace-write" | "read-only" | "off";

export interface SandboxPolicy {
  mode: SandboxMode;
  /** Absolute directories the shell may write in (workspace-write only): the session's cwd and configured extras. */
  writable: string[];
  /**
   * Absolute paths that stay read-only even inside a writable root (Crow's own config and extension directories).
   * The whole `.git` of every writable root is always added (see bwrap.ts `gitControlPaths`).
   */
  readOnly: string[];
  /** false: the shell has no network at all (its own network namespace, loopback included). */
  network: boolean;
  /**
   * Absolute paths the shell must not even read (Crow's `.env` and config.yaml, which hold provider keys): a file
   * is replaced by /dev/null on a nodev mount (reading it says "Permission denied"), a directory by an empty one.
   * The `read` and `edit` tools refuse them too, on their real path (`checkReadable`). Optional on the wire.
   */
  hidden?: string[];
  /**
   * Why some `hidden` entries are hidden, by entry (exactly as listed there), for the refusal the read and edit
   * tools give the model; an entry not named here is one of Crow's own files (provider keys, session transcripts).
   * Optional on the wire.
   */
  hiddenReasons?: Record<string, HiddenReason>;
  /**
   * Directories shown at a second path inside the sandbox (`crow eval` shows a trial's workspace as `/app`): `source`
   * is mounted at `target`, writable when `source` is inside a writable root, and the file tools read and write a
   * path under `target` at the same place under `source`. Optional on the wire.
   */
  binds?: SandboxBind[];
}

/**
 * Why a path other than Crow's own files is hidden (see {@link SandboxPolicy.hiddenReasons}):
 * - `outside-view`: the session sees only part of the host (a `crow eval` trial: its workspace and the system
 *   directories), and this lies outside it;
 * - `private`: other users may not read it on the host (/etc/shadow…), and a session running as root must not either.
 */
export type HiddenReason = "outside-view" | "private";

const HIDDEN_REASONS: readonly HiddenReason[] = ["outside-view", "private"];

/** One entry of {@link SandboxPolicy.binds}: both absolute. */
export interface SandboxBind {
  source: string;
  target: string;
}

/** No confinement. */
export const UNCONFINED: SandboxPolicy = { mode: "off", writable: [], readOnly: [], network: true };

/** The policy standalone crow-mcp's `--sandbox` flag names, for a session in `cwd`. */
export function policyForFlag(mode: SandboxMode, cwd: string, network = mode !== "read-only"): SandboxPolicy {
  return { mode, writable: mode === "workspace-write" ? [cwd] : [], readOnly: [], network };
}

function absoluteList(value: unknown, what: string): string[] | string {
  if (value === undefined) return [];
  if (!Array.isArray(value)) return `${what} must be an array of absolute paths`;
  for (const entry of value) {
    if (typeof entry !== "string" || !path.isAbsolute(entry)) {
      return `${what} must hold absolute paths, got ${JSON.stringify(entry)}`;
    }
  }
  return value as string[];
}

function parseBinds(value: unknown): SandboxBind[] | string {
  if (value === undefined) return [];
  if (!Array.isArray(value)) return "sandbox binds must be an array of {source, target}";
  const binds: SandboxBind[] = [];
  for (const entry of value) {
    const { source, target } = (entry ?? {}) as Record<string, unknown>;
    if (
      typeof source !== "string" ||
      typeof target !== "string" ||
      !path.isAbsolute(source) ||
      !path.isAbsolute(target)
    ) {
      return `sandbox binds must hold {source, target} absolute paths, got ${JSON.stringify(entry)}`;
    }
    if (path.resolve(target) === "/") return "a sandbox bind cannot target /";
    binds.push({ source, target: path.resolve(target) });
  }
  return binds;
}

/** `hiddenReasons` as sent: an object naming entries of `hidden`, each with a known reason. */
function parseHiddenReasons(value: unknown, hidden: readonly string[]): Record<string, HiddenReason> | string {
  if (value === undefined) return {};
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return "sandbox hiddenReasons must be an object of hidden path → reason";
  }
  const reasons: Record<string, HiddenReason> = {};
  for (const [entry, reason] of Object.entries(value)) {
    if (!hidden.includes(entry)) return `sandbox hiddenReasons names ${JSON.stringify(entry)}, which is not hidden`;
    if (!HIDDEN_REASONS.includes(reason as HiddenReason)) {
      return `sandbox hiddenReasons: the reason for ${entry} must be ${HIDDEN_REASONS.map((r) => `"${r}"`).join(" or ")}, got ${JSON.stringify(reason)}`;
    }
    reasons[entry] = reason as HiddenReason;
  }
  return reasons;
}

/** Reads a policy sent as JSON (`_meta`), or says what is wrong with it. */
export function parseSandboxPolicy(value: unknown): { policy: SandboxPolicy } | { error: string } {
  if (typeof value !== "object" || value === null) return { error: "the sandbox policy must be an object" };
  const raw = value as Record<string, unknown>;
  if (raw.mode !== "workspace-write" && raw.mode !== "read-only" && raw.mode !== "off") {
    return { error: `sandbox mode must be "workspace-write", "read-only" or "off", got ${JSON.stringify(raw.mode)}` };
  }
  const writable = absoluteList(raw.writable, "sandbox writable");
  if (typeof writable === "string") return { error: writable };
  const readOnly = absoluteList(raw.readOnly, "sandbox readOnly");
  if (typeof readOnly === "string") return { error: readOnly };
  const hidden = absoluteList(raw.hidden, "sandbox hidden");
  if (typeof hidden === "string") return { error: hidden };
  if (raw.network !== undefined && typeof raw.network !== "boolean") {
    return { error: `sandbox network must be true or false, got ${JSON.stringify(raw.network)}` };
  }
  const hiddenReasons = parseHiddenReasons(raw.hiddenReasons, hidden);
  if (typeof hiddenReasons === "string") return { error: hiddenReasons };
  const binds = parseBinds(raw.binds);
  if (typeof binds === "string") return { error: binds };
  const policy: SandboxPolicy = { mode: raw.mode, writable, readOnly, network: raw.network ?? true };
  if (hidden.length > 0) policy.hidden = hidden;
  if (Object.keys(hiddenReasons).length > 0) policy.hiddenReasons = hiddenReasons;
  if (binds.length > 0) policy.binds = binds;
  return { policy };
}

/**
 * `policy` with `extra` added to its hidden paths (none added with the sandbox off, which hides nothing): what the
 * server itself hides from every session (its socket's directory) whatever the client sent.
 */
export function withHidden(policy: SandboxPolicy, extra: readonly string[] | undefined): SandboxPolicy {
  if (policy.mode === "off" || !extra || extra.length === 0) return policy;
  const hidden = [...(policy.hidden ?? [])];
  for (const entry of extra) if (!hidden.includes(entry)) hidden.push(entry);
  return { ...policy, hidden };
}

/** True when two policies confine a shell the same way (a shell started under one can serve the other). */
export function samePolicy(a: SandboxPolicy, b: SandboxPolicy): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** One sentence for the model: what this shell may write and reach. */
export function describePolicy(policy: SandboxPolicy): string {
  if (policy.mode === "off") return "Commands run unconfined.";
  const where =
    policy.mode === "read-only"
      ? "this session is read-only: commands can read everything but write only in /tmp (a private temp dir)"
      : `commands may write only in ${[...policy.writable, "/tmp (a private temp dir)"].join(", ")}; .git stays read-only (git commands that only read work; commit, branch and fetch are for the user), and so do .agents, .crow and skills-lock.json (skills are installed by the user)`;
  return `Sandbox: ${where}; network is ${policy.network ? "on" : "off"}.`;
}
