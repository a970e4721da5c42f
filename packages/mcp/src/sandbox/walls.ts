/**
 * The sandbox's walls against the host's local services when the network is off: a new network namespace cuts TCP,
 * UDP and abstract unix sockets, but a unix socket bound to a file is reached through the filesystem, and connect()
 * needs no write access, so the read-only view of the host would still reach docker, dbus, an ssh or gpg agent.
 */
import { lstatSync, readFileSync, realpathSync } from "node:fs";
import { inside } from "./which.js";

/**
 * bwrap arguments (after `--proc /proc`) making the kernel's settings read-only: run as root, a sandboxed command
 * keeps uid 0 without capabilities, and most of /proc/sys is writable by uid 0 — kernel.core_pattern names a program
 * the host's kernel runs as root on the next crash, kernel.modprobe one it runs to load a module — and
 * /proc/sysrq-trigger reboots. bwrap 0.8 covers /proc/irq and /proc/bus only; these are bound read-only from the
 * host's /proc (the same settings: they are the kernel's, not the PID namespace's).
 */
export function procWallArgs(): string[] {
  return [
    "--ro-bind",
    "/proc/sys",
    "/proc/sys",
    "--ro-bind-try",
    "/proc/sysrq-trigger",
    "/proc/sysrq-trigger",
    "--ro-bind-try",
    "/proc/fs",
    "/proc/fs",
  ];
}

/** Directories replaced by private, empty ones when the network is off (bwrap arguments). */
const RUNTIME_DIRS = ["/run", "/var/run"];

/**
 * The host's runtime directories, where most services listen: a private empty one each. `/var/run` only when it is
 * a directory of its own (usually it is a link to /run).
 */
export function privateRuntimeDirs(): string[] {
  const args = ["--tmpfs", "/run"];
  try {
    if (lstatSync("/var/run").isDirectory()) args.push("--tmpfs", "/var/run");
  } catch {
    // No /var/run.
  }
  return args;
}

/** One line of /proc/net/unix: `Num: RefCount Protocol Flags Type St Inode Path`; the path may hold spaces. */
const SOCKET_LINE = /^\s*\S+:\s+(?:\S+\s+){6}(\/.*)$/;

/** The real paths of the unix sockets bound to files on the host, as /proc/net/unix lists them now. */
function boundSockets(): string[] {
  let table: string;
  try {
    table = readFileSync("/proc/net/unix", "utf8");
  } catch {
    return [];
  }
  const sockets = new Set<string>();
  for (const line of table.split("\n")) {
    const bound = SOCKET_LINE.exec(line)?.[1];
    if (bound === undefined) continue;
    try {
      const real = realpathSync(bound);
      if (lstatSync(real).isSocket()) sockets.add(real);
    } catch {
      // Gone, or in another mount namespace: nothing to cover here.
    }
  }
  return [...sockets];
}

/**
 * bwrap arguments covering every unix socket bound to a file on the host (as /proc/net/unix lists them when the
 * shell starts) outside /tmp (private already), the runtime directories (see above) and the writable roots: each is
 * replaced by /dev/null, so a connect() there is refused. A socket bound later, or by a relative path, is not seen.
 */
export function hostSocketBinds(writableRoots: readonly string[]): string[] {
  const covered = ["/tmp", ...RUNTIME_DIRS, ...writableRoots];
  return boundSockets()
    .filter((socket) => !covered.some((dir) => inside(socket, dir)))
    .flatMap((socket) => ["--ro-bind", "/dev/null", socket]);
}

/**
 * bwrap arguments covering the unix sockets in `exposed` (host folders mounted into the private /tmp or /run: the
 * PATH's, path-dirs.ts) outside the writable roots, network on or off: those places hid them before.
 */
export function exposedSocketBinds(exposed: readonly string[], writableRoots: readonly string[]): string[] {
  if (exposed.length === 0) return [];
  return boundSockets()
    .filter((socket) => exposed.some((dir) => inside(socket, dir)) && !writableRoots.some((dir) => inside(socket, dir)))
    .flatMap((socket) => ["--ro-bind", "/dev/null", socket]);
}
