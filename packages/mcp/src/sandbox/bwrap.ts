/**
 * Confinement through bubblewrap (`bwrap`), driven directly as codex does: the whole filesystem bound read-only, the
 * writable roots bound writable on top, the protected paths inside them (`.git/hooks`, `.git/config`, Crow's own
 * config) bound read-only again on top of those, a private directory as /tmp, a new PID namespace (host processes
 * are invisible and cannot be signalled), and a new network namespace when the network is off.
 *
 * No `--new-session`: the shell runs in a PTY and needs it as its controlling terminal for job control (C-c, C-z,
 * background jobs). The usual reason for `--new-session` is TIOCSTI, typing into the caller's terminal; here that
 * terminal is the shell's own PTY, which only crow-mcp reads, so a typed-in line lands in the same sandboxed shell.
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, realpathSync, statSync } from "node:fs";
import path from "node:path";
import { bindArgs, rootArgs, sealRootArgs } from "./binds.js";
import type { SandboxPolicy } from "./policy.js";

/** Whether bubblewrap can confine commands here, and if not, why and what to do. */
export type SandboxAvailability = { ok: true; bwrap: string } | { ok: false; reason: string };

let cached: SandboxAvailability | undefined;
let probing: Promise<SandboxAvailability> | undefined;

/** The bwrap to run: `CROW_BWRAP` (tests, unusual installs) or `bwrap` from PATH. */
function bwrapCommand(): string {
  return process.env.CROW_BWRAP || "bwrap";
}

/** The probe: bwrap with the namespaces the sandbox needs, running `true`. */
const PROBE_ARGS = [
  "--ro-bind",
  "/",
  "/",
  "--dev",
  "/dev",
  "--proc",
  "/proc",
  "--unshare-pid",
  "--die-with-parent",
  "true",
];
const PROBE_TIMEOUT_MS = 10_000;

const NOT_LINUX = (): SandboxAvailability => ({
  ok: false,
  reason: `commands run unconfined: Crow's sandbox uses bubblewrap, which exists only on Linux (this is ${process.platform}).`,
});

/** The verdict on one run of the probe: how it failed to start (`error`), or its exit status and stderr. */
function verdict(
  bwrap: string,
  error: NodeJS.ErrnoException | undefined,
  status: number | null,
  stderr: string,
): SandboxAvailability {
  if (error?.code === "ENOENT") {
    return {
      ok: false,
      reason:
        "commands run unconfined: bubblewrap (bwrap) is not installed. Install it (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap) to confine them, or set sandbox: off in config.yaml to silence this notice.",
    };
  }
  if (error || status !== 0) {
    const why = (error?.message ?? stderr).trim() || `exit code ${status}`;
    return {
      ok: false,
      reason: `commands run unconfined: bubblewrap cannot create a sandbox here (${why}). This usually means user namespaces are disabled (containers, kernel.unprivileged_userns_clone=0 or an AppArmor restriction); allow them, or set sandbox: off in config.yaml to silence this notice.`,
    };
  }
  return { ok: true, bwrap };
}

/**
 * Checks once per process that bwrap runs and can create the namespaces the sandbox needs (some containers forbid
 * user namespaces). Synchronous: it runs once and takes a few milliseconds. A process that knows early it will need
 * the answer starts {@link probeSandbox} instead, so the check runs while it does other things; this then returns its
 * answer.
 */
export function sandboxAvailability(): SandboxAvailability {
  if (cached) return cached;
  if (process.platform !== "linux") {
    cached = NOT_LINUX();
    return cached;
  }
  const bwrap = bwrapCommand();
  const probe = spawnSync(bwrap, PROBE_ARGS, { encoding: "utf8", timeout: PROBE_TIMEOUT_MS });
  cached = verdict(bwrap, probe.error as NodeJS.ErrnoException | undefined, probe.status, probe.stderr ?? "");
  return cached;
}

/**
 * The same check as {@link sandboxAvailability}, without blocking: bwrap runs as a child process while the caller
 * goes on (the agent starts it when it starts, and awaits it when a session opens). Once per process; never rejects.
 */
export function probeSandbox(): Promise<SandboxAvailability> {
  if (cached) return Promise.resolve(cached);
  if (process.platform !== "linux") return Promise.resolve(sandboxAvailability());
  probing ??= new Promise((resolve) => {
    const bwrap = bwrapCommand();
    let stderr = "";
    let failure: NodeJS.ErrnoException | undefined;
    let settled = false;
    const settle = (status: number | null) => {
      // `close` follows `error` too: the first decides.
      if (settled) return;
      settled = true;
      // A synchronous check that ran meanwhile already decided: one answer per process.
      cached ??= verdict(bwrap, failure, status, stderr);
      resolve(cached);
    };
    const child = spawn(bwrap, PROBE_ARGS, { stdio: ["ignore", "ignore", "pipe"], timeout: PROBE_TIMEOUT_MS });
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (text: string) => {
      stderr += text;
    });
    // ENOENT and the like: no `close` follows a spawn that failed.
    child.once("error", (error: NodeJS.ErrnoException) => {
      failure = error;
      settle(null);
    });
    child.once("close", (code, signal) => {
      if (signal) failure = new Error(`bwrap was killed by ${signal}`);
      settle(code);
    });
  });
  return probing;
}

/** Forgets the cached availability (tests that point CROW_BWRAP elsewhere). */
export function resetSandboxAvailability(): void {
  cached = undefined;
  probing = undefined;
}

function real(p: string): string | undefined {
  try {
    return realpathSync(p);
  } catch {
    return undefined;
  }
}

export function inside(child: string, root: string): boolean {
  const rel = path.relative(root, child);
  return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
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

/**
 * The paths that stay read-only inside the writable roots, as real paths: each root's `.git/hooks` and `.git/config`
 * (code there runs later outside the sandbox, on the user's next git command) and the policy's `readOnly` entries.
 * Only existing paths: bwrap cannot bind what is not there.
 */
export function protectedPaths(policy: SandboxPolicy, roots: readonly string[] = writableRoots(policy)): string[] {
  const candidates = [
    ...roots.flatMap((root) => [path.join(root, ".git", "hooks"), path.join(root, ".git", "config")]),
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

/**
 * Creates `.git/hooks` (empty, as `git init` would) in each writable root that is a repository without one: bwrap can
 * only protect what exists, and a hooks directory the shell could create would run its code on the next git command
 * outside the sandbox.
 */
function ensureHooksDirs(roots: readonly string[]): void {
  for (const root of roots) {
    const git = path.join(root, ".git");
    try {
      if (statSync(git).isDirectory()) mkdirSync(path.join(git, "hooks"), { recursive: true });
    } catch {
      // Not a repository (or .git is a worktree's file): nothing to protect here.
    }
  }
}

/** Where the sandboxed shell runs and what else it must see. */
export interface BwrapLayout {
  /** The shell's starting directory. */
  cwd: string;
  /** Host directory mounted as the shell's /tmp (writable, private to this shell). */
  privateTmp: string;
  /** Host directory the shell must read (its command file), mounted read-only at the same path. */
  commandDir: string;
}

/** bwrap's arguments (up to and including `--`) confining a command by `policy`. */
export function bwrapArgs(policy: SandboxPolicy, layout: BwrapLayout): string[] {
  ensureHooksDirs(writableRoots(policy));
  const args = [...rootArgs(policy), "--dev", "/dev", "--proc", "/proc", "--bind", layout.privateTmp, "/tmp"];
  // The workspace stays visible even when it lives under /tmp (which the private /tmp hides).
  const cwd = real(layout.cwd) ?? layout.cwd;
  args.push("--ro-bind", cwd, cwd);
  const roots = writableRoots(policy);
  for (const root of roots) args.push("--bind", root, root);
  args.push(...bindArgs(policy, roots));
  for (const protectedPath of protectedPaths(policy, roots)) args.push("--ro-bind", protectedPath, protectedPath);
  args.push("--ro-bind", layout.commandDir, layout.commandDir);
  for (const hidden of policy.hidden ?? []) {
    const resolved = real(hidden);
    if (!resolved) continue;
    if (statSync(resolved).isDirectory()) args.push("--tmpfs", resolved, "--remount-ro", resolved);
    else args.push("--ro-bind", "/dev/null", resolved);
  }
  args.push(...sealRootArgs(policy), "--unshare-pid", "--unshare-ipc");
  if (!policy.network) args.push("--unshare-net");
  args.push("--die-with-parent", "--chdir", layout.cwd, "--");
  return args;
}

/** True if bwrap's arguments are needed at all. */
export function isConfined(policy: SandboxPolicy): boolean {
  return policy.mode !== "off";
}
