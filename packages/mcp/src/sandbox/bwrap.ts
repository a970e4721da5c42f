/**
 * Confinement through bubblewrap (`bwrap`), driven directly as codex does: the whole filesystem bound read-only, the
 * writable roots bound writable on top, the protected paths inside them (each root's whole `.git`, Crow's own
 * config) bound read-only again on top of those, a private directory as /tmp, a new PID namespace (host processes
 * are invisible and cannot be signalled), no capabilities (as root too), and, when the network is off, a new network
 * namespace and private /run and /var/run (the host's unix sockets).
 *
 * No `--new-session`: the shell runs in a PTY and needs it as its controlling terminal for job control (C-c, C-z,
 * background jobs). The usual reason for `--new-session` is TIOCSTI, typing into the caller's terminal; here that
 * terminal is the shell's own PTY, which only crow-mcp reads, so a typed-in line lands in the same sandboxed shell.
 */
import { lstatSync, readFileSync, realpathSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { bindArgs, leftOutOfRoot, rootArgs, sealRootArgs } from "./binds.js";
import { laterPaths } from "./later.js";
import { pathMountArgs, pathVisibility } from "./path-dirs.js";
import type { SandboxPolicy } from "./policy.js";
import { exposedSocketBinds, hostSocketBinds, privateRuntimeDirs, procWallArgs } from "./walls.js";
import { inside } from "./which.js";

export {
  latestSandboxAnswer,
  probeSandbox,
  resetSandboxAvailability,
  type SandboxAvailability,
  sandboxAvailability,
  useBwrapProgram,
} from "./probe.js";
export { inside } from "./which.js";

function real(p: string): string | undefined {
  try {
    return realpathSync(p);
  } catch {
    return undefined;
  }
}

/** The existing writable roots of a policy, as real paths, parents before children. */
export function writableRoots(policy: SandboxPolicy): string[] {
  if (policy.mode !== "workspace-write") return [];
  const roots = new Set<string>();
  for (const root of policy.writable) {
    const resolved = real(root);
    if (resolved) roots.add(resolved);
  }
  return [...roots].sort((a, b) => a.length - b.length);
}

/** The directory a git file names (`gitdir: …` in a worktree's `.git`, `…` in `commondir`), resolved against `base`. */
function namedDir(file: string, base: string, prefix = ""): string | undefined {
  try {
    const line = readFileSync(file, "utf8").split("\n")[0]?.trim() ?? "";
    if (!line.startsWith(prefix)) return undefined;
    const named = line.slice(prefix.length).trim();
    return named ? path.resolve(base, named) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The git control paths of a writable root, whose contents run code on the user's next git command outside the
 * sandbox (config: core.fsmonitor, core.hooksPath, aliases; hooks; `commondir` naming another config and hooks): its
 * whole `.git`, a directory or a worktree's file, and the directories that file and a `commondir` name.
 */
export function gitControlPaths(root: string): string[] {
  const dotGit = path.join(root, ".git");
  let isFile: boolean;
  try {
    isFile = lstatSync(dotGit).isFile();
  } catch {
    return [];
  }
  const paths = [dotGit];
  const gitDir = isFile ? namedDir(dotGit, root, "gitdir:") : dotGit;
  if (gitDir === undefined) return paths;
  if (gitDir !== dotGit) paths.push(gitDir);
  const common = namedDir(path.join(gitDir, "commondir"), gitDir);
  if (common !== undefined) paths.push(common);
  return paths;
}

/**
 * The paths that stay read-only inside the writable roots, as real paths: each root's git control paths (see
 * {@link gitControlPaths}: bound read-only, `.git` can be neither changed nor renamed nor removed, since a mount
 * point cannot be), its skills lockfile, `.agents` and `.crow` (later.ts), and the policy's `readOnly` and `hidden`
 * entries. Only existing paths: bwrap cannot bind what is not there (the shell plants the missing later.ts ones first).
 */
export function protectedPaths(policy: SandboxPolicy, roots: readonly string[] = writableRoots(policy)): string[] {
  const candidates = [
    ...roots.flatMap(gitControlPaths),
    ...roots.flatMap(laterPaths),
    ...policy.readOnly,
    ...(policy.hidden ?? []),
  ];
  const found = new Set<string>();
  for (const candidate of candidates) {
    const resolved = real(candidate);
    if (resolved && roots.some((root) => inside(resolved, root))) found.add(resolved);
  }
  return [...found];
}

/** Where the sandboxed shell runs and what else it must see. */
export interface BwrapLayout {
  /** The shell's starting directory. */
  cwd: string;
  /** Host directory mounted as the shell's /tmp (writable, private to this shell). */
  privateTmp: string;
  /** Host directory the shell must read (its command file), mounted read-only at the same path. */
  commandDir: string;
  /** The shell's PATH: its folders in the sandbox's private places are mounted read-only (path-dirs.ts). */
  searchPath?: string;
}

/**
 * The policy's hidden paths as mounts, by real path: `holding`, directories that hold a place the shell is shown
 * (covered before those places are bound); `inside`, the rest. Left out: an entry a rebuilt root leaves out already
 * (binds.ts), and one under the host's /tmp that no shown place brings back — the shell's /tmp is a private one, so
 * it is out of view, and mounting over it would only leave its name there.
 */
function hiddenMounts(policy: SandboxPolicy, bound: readonly string[]): { holding: string[]; inside: string[] } {
  const leftOut = leftOutOfRoot(policy);
  const holding: string[] = [];
  const rest: string[] = [];
  for (const entry of policy.hidden ?? []) {
    if (leftOut.has(entry)) continue;
    const resolved = real(entry);
    if (!resolved) continue;
    if (inside(resolved, "/tmp") && !bound.some((place) => inside(resolved, place))) continue;
    const holds = bound.some((place) => place !== resolved && inside(place, resolved));
    if (holds && statSync(resolved).isDirectory()) holding.push(resolved);
    else rest.push(resolved);
  }
  // What a holding directory's emptying covers already (not inside a place shown in it) needs no mount of its own,
  // and could not have one: its parents are gone from the read-only emptied directory.
  const covered = (entry: string) =>
    holding.some((dir) => entry !== dir && inside(entry, dir)) && !bound.some((place) => inside(entry, place));
  return { holding, inside: rest.filter((entry) => !covered(entry)) };
}

/** bwrap's arguments (up to and including `--`) confining a command by `policy`. */
export function bwrapArgs(policy: SandboxPolicy, layout: BwrapLayout): string[] {
  const args = [...rootArgs(policy), "--dev", "/dev", "--proc", "/proc", ...procWallArgs()];
  args.push("--bind", layout.privateTmp, "/tmp");
  // Before the binds below: a workspace or the command's directory under /run must stay visible.
  if (!policy.network) args.push(...privateRuntimeDirs());
  // The user's tools on PATH under /tmp (or /run) stay runnable, read-only; before the workspace binds, so a PATH
  // folder that holds a workspace root does not cover the root's writable bind.
  const roots = writableRoots(policy);
  const cwd = real(layout.cwd) ?? layout.cwd;
  const onPath = pathVisibility(policy, layout.searchPath, {
    shown: [cwd, ...roots],
    keep: [tmpdir(), layout.commandDir],
  });
  args.push(...pathMountArgs(onPath));
  const bound = [cwd, ...roots, layout.commandDir, ...onPath.mounts.map((m) => m.target)];
  const hidden = hiddenMounts(policy, bound);
  // A hidden directory that holds a place the shell is shown (`crow eval` hides the host's temporary directory, where
  // a trial's workspace and the terminal's command file live): emptied before those places are bound into it, made
  // read-only after.
  for (const dir of hidden.holding) args.push("--tmpfs", dir);
  // The workspace stays visible even when it lives under /tmp (which the private /tmp hides).
  args.push("--ro-bind", cwd, cwd);
  for (const root of roots) args.push("--bind", root, root);
  for (const protectedPath of protectedPaths(policy, roots)) args.push("--ro-bind", protectedPath, protectedPath);
  // After the protected paths: a bind is recursive, so a workspace shown at /app keeps its read-only .git.
  args.push(...bindArgs(policy, roots));
  args.push("--ro-bind", layout.commandDir, layout.commandDir);
  if (!policy.network) args.push(...hostSocketBinds(roots));
  args.push(...exposedSocketBinds([...new Set(onPath.mounts.map((m) => m.source))], roots));
  for (const dir of hidden.holding) args.push("--remount-ro", dir);
  // After the binds: a hidden path inside a workspace (Crow's home, its store) is covered in every view of it.
  for (const entry of hidden.inside) {
    if (statSync(entry).isDirectory()) args.push("--tmpfs", entry, "--remount-ro", entry);
    else args.push("--ro-bind", "/dev/null", entry);
  }
  // Run as root, bwrap would keep every capability inside, and with them a command could remount / read-write or
  // unmount the binds above. The probe checked that this leaves none (probe.ts).
  args.push(...sealRootArgs(policy), "--unshare-pid", "--unshare-ipc", "--cap-drop", "ALL");
  if (!policy.network) args.push("--unshare-net");
  args.push("--die-with-parent", "--chdir", layout.cwd, "--");
  return args;
}

/** True if bwrap's arguments are needed at all. */
export function isConfined(policy: SandboxPolicy): boolean {
  return policy.mode !== "off";
}
