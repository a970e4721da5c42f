/**
 * The terminal's private temp directories (`crow-terminal-<pid>-XXXXXX`, holding the file each command is passed
 * through) and the removal of those a killed crow-mcp left behind. A shell removes its directory when it ends, but a
 * crow-mcp killed with SIGKILL cannot: its directories stay until a later crow-mcp, at start, finds that the process
 * named in them is gone.
 */
import { mkdtempSync } from "node:fs";
import { lstat, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { log } from "../log.js";

const PREFIX = "crow-terminal-";
/** `crow-terminal-<pid>-XXXXXX`: made by the crow-mcp of that pid. */
const WITH_PID = /^crow-terminal-(\d+)-[A-Za-z0-9]{6}$/;
/** `crow-terminal-XXXXXX`: made by a crow-mcp from before the pid was in the name. */
const WITHOUT_PID = /^crow-terminal-[A-Za-z0-9]{6}$/;
/** A directory of the older form is taken for an orphan once it is this old (its owner cannot be told). */
const UNOWNED_ORPHAN_AGE_MS = 24 * 60 * 60 * 1000;

/** Creates a terminal's private directory, named after this process so that it can be told an orphan later. */
export function makeTerminalDir(): string {
  return mkdtempSync(path.join(tmpdir(), `${PREFIX}${process.pid}-`));
}

/** Whether process `pid` exists (one of another user counts: it may not be signalled, but it is there). */
export function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Removes the terminal directories in `dir` (the temp directory by default) whose crow-mcp is gone: those named
 * after a process that no longer exists, and those of the older unnamed form untouched for a day. Only this user's
 * real directories are considered (never a symbolic link). Resolves to the paths removed; never throws.
 */
export async function sweepOrphanTerminalDirs(
  dir: string = tmpdir(),
  exists: (pid: number) => boolean = processExists,
  now: number = Date.now(),
): Promise<string[]> {
  let names: string[];
  try {
    names = (await readdir(dir)).filter((name) => name.startsWith(PREFIX));
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    const full = path.join(dir, name);
    try {
      const pid = WITH_PID.exec(name)?.[1];
      if (pid === undefined && !WITHOUT_PID.test(name)) continue;
      if (pid !== undefined && (Number(pid) === process.pid || exists(Number(pid)))) continue;
      const stats = await lstat(full);
      if (!stats.isDirectory() || stats.uid !== process.getuid?.()) continue;
      if (pid === undefined && now - stats.mtimeMs < UNOWNED_ORPHAN_AGE_MS) continue;
      await rm(full, { recursive: true, force: true });
      removed.push(full);
    } catch (error) {
      log.debug(`could not remove the orphaned terminal directory ${full}`, error);
    }
  }
  if (removed.length > 0) log.debug(`removed ${removed.length} orphaned terminal directories`);
  return removed;
}

let swept: Promise<string[]> | undefined;

/** Starts {@link sweepOrphanTerminalDirs} on the process's temp directory, once per process. */
export function sweepOrphanTerminalDirsOnce(): Promise<string[]> {
  swept ??= sweepOrphanTerminalDirs();
  return swept;
}
