/**
 * What a writable root holds that acts later, outside the sandbox, besides `.git` (bwrap.ts `gitControlPaths`): the
 * skills lockfile (the user's next `crow skills install` fetches what it names, unconfined), `.agents` and `.crow`
 * (their skills go into the next session's prompt once the project is trusted; `.crow` holds project extensions).
 * They stay read-only inside the sandbox whether they exist or not.
 *
 * bwrap can only bind over what exists, and the model must not be able to create them either, so one that is missing
 * when a shell starts is planted first (an empty file or folder, bound read-only like the rest: a mount point can be
 * neither written, renamed nor removed, and neither can the root it lies in) and removed when the shell ends, if it
 * is still empty and no other sandbox (another session's shell, another Crow) still has it mounted.
 */
import {
  closeSync,
  constants,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmdirSync,
  unlinkSync,
} from "node:fs";
import path from "node:path";
import { log } from "../log.js";
import type { SandboxPolicy } from "./policy.js";

/** The names guarded at the top of every writable root, besides `.git`: files first-level only. */
export const LATER_NAMES = [".agents", ".crow", "skills-lock.json"] as const;

/** Every name that stays read-only at the top of a writable root (the file tools refuse them by name). */
export const GUARDED_NAMES: ReadonlySet<string> = new Set([".git", ...LATER_NAMES]);

/** The guarded paths of a writable root (existing or not). */
export function laterPaths(root: string): string[] {
  return LATER_NAMES.map((name) => path.join(root, name));
}

function missing(p: string): boolean {
  try {
    lstatSync(p);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT";
  }
}

/**
 * Plants each missing guarded path of `roots` (see the module comment) and returns those it made, for
 * {@link removePlanted}. Nothing for a policy with binds: `crow eval`'s trial workspace is thrown away afterwards,
 * and a task's checks may list it.
 */
export function plantGuards(policy: SandboxPolicy, roots: readonly string[]): string[] {
  if (policy.mode !== "workspace-write" || (policy.binds ?? []).length > 0) return [];
  const planted: string[] = [];
  for (const root of roots) {
    for (const name of LATER_NAMES) {
      const target = path.join(root, name);
      if (!missing(target)) continue;
      try {
        if (name === "skills-lock.json") {
          const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
          closeSync(openSync(target, flags, 0o644));
        } else {
          mkdirSync(target, { mode: 0o755 });
        }
        planted.push(target);
      } catch (error) {
        // Made meanwhile by someone else (then it exists and is bound), or the root is not ours to write.
        log.debug(`could not plant ${target}`, error);
      }
    }
  }
  return planted;
}

/** A mount point as /proc/<pid>/mountinfo writes it: space, tab, newline and backslash as octal escapes. */
function unescapeMountPoint(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
}

/** The mount points of every mount namespace but this process's and `own` (one /proc/<pid>/mountinfo each). */
function mountedElsewhere(own: ReadonlySet<string>): Set<string> {
  const points = new Set<string>();
  const seen = new Set(own);
  try {
    seen.add(readlinkSync("/proc/self/ns/mnt"));
  } catch {
    return points;
  }
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const ns = readlinkSync(`/proc/${pid}/ns/mnt`);
      if (seen.has(ns)) continue;
      seen.add(ns);
      for (const line of readFileSync(`/proc/${pid}/mountinfo`, "utf8").split("\n")) {
        const point = line.split(" ")[4];
        if (point) points.add(unescapeMountPoint(point));
      }
    } catch {
      // Gone meanwhile, or another user's process: not a sandbox of ours.
    }
  }
  return points;
}

/**
 * Removes what {@link plantGuards} planted, once its shell has ended: a folder only if empty, the lockfile only if
 * still an empty regular file, and neither while another mount namespace (another sandbox, not the shell's own
 * `namespace` that is going away) has it as a mount point, since removing it would lift that sandbox's guard.
 */
export function removePlanted(planted: readonly string[], namespace?: string): void {
  if (planted.length === 0) return;
  const elsewhere = mountedElsewhere(new Set(namespace ? [namespace] : []));
  for (const target of planted) {
    if (elsewhere.has(target)) continue;
    try {
      const stats = lstatSync(target);
      if (stats.isDirectory()) rmdirSync(target);
      else if (stats.isFile() && stats.size === 0) unlinkSync(target);
    } catch {
      // Filled meanwhile (by the user, outside the sandbox): theirs now.
    }
  }
}

/** The mount namespace of process `pid` (`mnt:[N]`), if it can be read. */
export function mountNamespace(pid: number): string | undefined {
  try {
    return readlinkSync(`/proc/${pid}/ns/mnt`);
  } catch {
    return undefined;
  }
}
