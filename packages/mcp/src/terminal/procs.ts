import { readdirSync, readFileSync, readlinkSync } from "node:fs";

/**
 * Process bookkeeping through Linux /proc, synchronous on purpose: it also runs in a process 'exit' handler, where
 * nothing asynchronous gets to run.
 */

/** The fields of /proc/<pid>/stat we need. */
export interface ProcStat {
  pid: number;
  ppid: number;
  pgrp: number;
  session: number;
  /** Foreground process group of the process's controlling terminal (-1 or 0 when none). */
  tpgid: number;
}

/** Reads /proc/<pid>/stat, or undefined if the process is gone. */
export function readStat(pid: number): ProcStat | undefined {
  let raw: string;
  try {
    raw = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  // The command name is in parentheses and may itself contain spaces and parentheses: parse after the last ")".
  const close = raw.lastIndexOf(")");
  if (close < 0) return undefined;
  const fields = raw.slice(close + 2).split(" ");
  // fields[0] is the state; then ppid, pgrp, session, tty_nr, tpgid.
  const num = (i: number) => Number(fields[i]);
  return { pid, ppid: num(1), pgrp: num(2), session: num(3), tpgid: num(5) };
}

/** The process group currently in the foreground of the shell's terminal, if any. */
export function foregroundProcessGroup(shellPid: number): number | undefined {
  const stat = readStat(shellPid);
  return stat && stat.tpgid > 0 ? stat.tpgid : undefined;
}

function allStats(): ProcStat[] {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return [];
  }
  const stats: ProcStat[] = [];
  for (const entry of entries) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid <= 0) continue;
    const stat = readStat(pid);
    if (stat) stats.push(stat);
  }
  return stats;
}

/**
 * Every process that belongs to a shell: its terminal session (foreground and background jobs, `nohup` and
 * `disown`ed ones included; bash runs each job in its own process group, so the session is the net that catches
 * them all) plus any descendant that left the session with setsid but still hangs below the shell.
 */
export function shellProcesses(shellPid: number): number[] {
  const stats = allStats();
  const found = new Set<number>();
  for (const s of stats) if (s.session === shellPid || s.pid === shellPid) found.add(s.pid);
  const children = new Map<number, number[]>();
  for (const s of stats) {
    const list = children.get(s.ppid);
    if (list) list.push(s.pid);
    else children.set(s.ppid, [s.pid]);
  }
  const queue = [...found];
  while (queue.length > 0) {
    const pid = queue.pop() as number;
    for (const child of children.get(pid) ?? []) {
      if (!found.has(child)) {
        found.add(child);
        queue.push(child);
      }
    }
  }
  return [...found];
}

/** Sends `signal` to a process or, with a negative id, a process group; false if it does not exist. */
export function sendSignal(target: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(target, signal);
    return true;
  } catch {
    return false;
  }
}

/**
 * The processes whose environment holds `name=value` (a shell's marker, inherited by everything it starts, `setsid`
 * and double-forked daemons included). Only processes whose environment this user may read are seen; a process that
 * has exited (a zombie) shows an empty environment. Never this process itself.
 */
export function markedProcesses(name: string, value: string): number[] {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return [];
  }
  const entry = Buffer.from(`${name}=${value}\0`);
  const found: number[] = [];
  for (const dir of entries) {
    const pid = Number(dir);
    if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) continue;
    let environ: Buffer;
    try {
      environ = readFileSync(`/proc/${pid}/environ`);
    } catch {
      continue;
    }
    for (let at = environ.indexOf(entry); at >= 0; at = environ.indexOf(entry, at + 1)) {
      if (at === 0 || environ[at - 1] === 0) {
        found.push(pid);
        break;
      }
    }
  }
  return found;
}

/** How many times the marked processes are looked for again: a process may have forked while the last ones died. */
const MARK_PASSES = 5;

/**
 * SIGKILLs the shell and everything it started (see {@link shellProcesses}), and with `marker` every process that
 * carries it in its environment (what left the session and the tree: `setsid cmd &`, `nohup` after a double fork).
 * Synchronous.
 */
export function killShellTree(shellPid: number, marker?: { name: string; value: string }): void {
  for (const pid of shellProcesses(shellPid)) sendSignal(pid, "SIGKILL");
  sendSignal(-shellPid, "SIGKILL");
  if (!marker) return;
  for (let pass = 0; pass < MARK_PASSES; pass++) {
    const marked = markedProcesses(marker.name, marker.value);
    if (marked.length === 0) return;
    for (const pid of marked) sendSignal(pid, "SIGKILL");
  }
}

// System call numbers as /proc/<pid>/syscall reports them (x86-64; arm64 has no select()).
const SYS_READ = process.arch === "arm64" ? 63 : 0;
const SYS_SELECT = process.arch === "arm64" ? -1 : 23;
const SYS_PSELECT6 = process.arch === "arm64" ? 72 : 270;

function linkTarget(file: string): string | undefined {
  try {
    return readlinkSync(file);
  } catch {
    return undefined;
  }
}

/**
 * True when the terminal's foreground job is blocked waiting for the user to type: a process of the foreground
 * group sits in read() on the terminal, or in select()/pselect() on stdin alone (readline-based REPLs such as
 * `python3 -i`). Lets a call return at once for `read x`, `python3 -i`, a `[y/N]` prompt or a stray `grep pattern`
 * without a file, instead of waiting out the soft timeout. False whenever it cannot tell.
 */
export function waitingForTerminalInput(shellPid: number): boolean {
  const group = foregroundProcessGroup(shellPid);
  const tty = linkTarget(`/proc/${shellPid}/fd/0`);
  if (group === undefined || !tty?.startsWith("/dev/pts/")) return false;
  const members =
    group === shellPid
      ? [shellPid]
      : allStats()
          .filter((s) => s.pgrp === group)
          .map((s) => s.pid);
  for (const pid of members) {
    let syscall: string;
    try {
      syscall = readFileSync(`/proc/${pid}/syscall`, "utf8");
    } catch {
      continue;
    }
    const [nr, arg0] = syscall.trim().split(" ");
    const number = Number(nr);
    const fd = arg0 === undefined ? Number.NaN : Number.parseInt(arg0, 16);
    if (number === SYS_READ && linkTarget(`/proc/${pid}/fd/${fd}`) === tty) return true;
    if ((number === SYS_SELECT || number === SYS_PSELECT6) && fd === 1 && linkTarget(`/proc/${pid}/fd/0`) === tty)
      return true;
  }
  return false;
}
