/**
 * What the tools that read files for the model (crow-mcp's `read`, the agent's read through the editor) must not
 * read while a sandbox policy is in force: the policy's `hidden` paths (Crow's `.env` and config.yaml, which hold
 * provider keys) and other processes' environments. The sandboxed shell cannot read these either (bwrap hides the
 * files, and its own /proc shows no host process), so a tool must not be the way around it.
 */
import { realpathSync, statSync } from "node:fs";
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

/** Whether `file` is the same file as `entry` by device and inode (a hard link has a path of its own). */
function sameInode(file: string, entry: string): boolean {
  try {
    const a = statSync(file);
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
 * shell could read these files then anyway.
 */
export function checkReadable(file: string, policy: SandboxPolicy): string | undefined {
  if (policy.mode === "off") return undefined;
  const target = realTarget(file);
  const shown = target === path.resolve(file) ? file : `${file} (really ${target})`;
  if (PROCESS_ENVIRONMENT.test(target)) {
    return `Error: ${shown} was not read: a process's environment can hold API keys and is hidden from tools while the sandbox is on. Ask the user for the variable you need.`;
  }
  const hidden = (policy.hidden ?? []).find(
    (entry) => inside(target, realOrResolved(entry)) || sameInode(target, entry),
  );
  if (hidden === undefined) return undefined;
  return `Error: ${shown} was not read: it holds Crow's provider keys and is hidden from tools (${hidden}). Ask the user for what you need from it.`;
}
