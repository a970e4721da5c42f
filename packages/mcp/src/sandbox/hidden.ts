/**
 * What the tools that read files for the model (crow-mcp's `read`, the agent's read through the editor) must not
 * read while a sandbox policy is in force: the policy's `hidden` paths (Crow's `.env` and config.yaml, which hold
 * provider keys) and other processes' environments. The sandboxed shell cannot read these either (bwrap hides the
 * files, and its own /proc shows no host process), so a tool must not be the way around it.
 */
import { realpathSync, type Stats, statSync } from "node:fs";
import path from "node:path";
import { inside } from "./bwrap.js";
import type { SandboxPolicy } from "./policy.js";
import { realTarget } from "./roots.js";

/** `/proc/<pid>/environ` and `/proc/<pid>/task/<tid>/environ` (after links are resolved: `/proc/self` is a pid). */
const PROCESS_ENVIRONMENT = /^\/proc\/\d+\/(?:task\/\d+\/)?environ$/;

function realOrResolved(entry: string): string {
  try {
    return realpathSync(entry);
  } catch {
    return path.resolve(entry);
  }
}

/** Whether the file `a` describes is `entry` by device and inode (a hard link has a path of its own). */
function sameInode(a: Stats, entry: string): boolean {
  try {
    const b = statSync(entry);
    return a.isFile() && b.isFile() && a.dev === b.dev && a.ino === b.ino;
  } catch {
    return false;
  }
}

/**
 * Undefined when `policy` lets a tool read `file` for the model; otherwise the refusal for the model. `file` is
 * compared on its real path (symbolic links and `..` resolved) with the real path of each hidden entry (a hidden
 * directory covers everything under it), and by inode (hard links). Nothing is refused with the sandbox off: the
 * shell could read these files then anyway. Resolves the path now: the tools check the file they hold open
 * ({@link checkOpenedReadable}); this is for a preview or a read the editor does.
 */
export function checkReadable(file: string, policy: SandboxPolicy): string | undefined {
  if (policy.mode === "off") return undefined;
  const target = realTarget(file);
  let stats: Stats | undefined;
  try {
    stats = statSync(target);
  } catch {
    stats = undefined;
  }
  return refusal(file, target, stats, policy);
}

/**
 * {@link checkReadable} for a file already open: `real` is where the descriptor really is (readlink of
 * /proc/self/fd/N) and `stats` its fstat, so a link swapped after the open changes nothing.
 */
export function checkOpenedReadable(
  file: string,
  opened: { real: string; stats?: Stats | undefined },
  policy: SandboxPolicy,
): string | undefined {
  if (policy.mode === "off") return undefined;
  return refusal(file, opened.real, opened.stats, policy);
}

function refusal(file: string, target: string, stats: Stats | undefined, policy: SandboxPolicy): string | undefined {
  const shown = target === path.resolve(file) ? file : `${file} (really ${target})`;
  if (PROCESS_ENVIRONMENT.test(target)) {
    return `Error: ${shown} was not read: a process's environment can hold API keys and is hidden from tools while the sandbox is on. Ask the user for the variable you need.`;
  }
  const hidden = (policy.hidden ?? []).find(
    (entry) => inside(target, realOrResolved(entry)) || (stats !== undefined && sameInode(stats, entry)),
  );
  if (hidden === undefined) return undefined;
  return `Error: ${shown} was not read: it holds Crow's provider keys and is hidden from tools (${hidden}). Ask the user for what you need from it.`;
}
