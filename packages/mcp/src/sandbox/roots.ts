/**
 * The writable roots applied in-process by the write and edit tools: the same rule as the shell's bind mounts, on
 * the path's real location (a symbolic link in the workspace pointing outside it is no way out).
 */
import { realpathSync } from "node:fs";
import path from "node:path";
import { inside, protectedPaths, writableRoots } from "./bwrap.js";
import { GUARDED_NAMES } from "./later.js";
import type { SandboxPolicy } from "./policy.js";

/**
 * The real path `file` would be written at: the real path of its deepest existing ancestor (links resolved) joined
 * with the components that do not exist yet. A final component that is a symbolic link is resolved too.
 */
export function realTarget(file: string): string {
  const missing: string[] = [];
  let current = path.resolve(file);
  for (;;) {
    try {
      return path.join(realpathSync(current), ...missing.reverse());
    } catch {
      const parent = path.dirname(current);
      if (parent === current) return path.join(current, ...missing.reverse());
      missing.push(path.basename(current));
      current = parent;
    }
  }
}

/**
 * Undefined when the policy lets a tool write `file`; otherwise the error for the model, naming the path, where it
 * really is, and what may be written instead. Resolves the path now: the tools themselves check the real path of a
 * directory they hold open ({@link checkWritableAt}); this is for a preview (the editor's write, a permission question).
 */
export function checkWritable(file: string, policy: SandboxPolicy): string | undefined {
  if (policy.mode === "off") return undefined;
  return checkWritableAt(file, realTarget(file), policy);
}

/**
 * {@link checkWritable} for a write that lands at real path `target` (the real path of the directory held open for
 * it, plus the rest). Anything under a writable root's `.git`, and `.git` itself, stays read-only: hooks, config,
 * `commondir` and the like run code on the user's next git command, outside the sandbox. So do its skills lockfile,
 * `.agents` and `.crow` (later.ts), existing or not.
 */
export function checkWritableAt(file: string, target: string, policy: SandboxPolicy): string | undefined {
  if (policy.mode === "off") return undefined;
  const shown = target === path.resolve(file) ? file : `${file} (really ${target})`;
  if (policy.mode === "read-only") {
    return `Error: ${shown} was not written: this session is read-only (sandbox), so no file may be changed. Ask the user to switch to another mode if the change is needed.`;
  }
  const roots = writableRoots(policy);
  const root = roots.find((r) => inside(target, r));
  if (!root) {
    return `Error: ${shown} was not written: it is outside the sandbox's writable directories (${roots.join(", ") || "none"}). Write inside them, or ask the user to add the directory to sandbox.writable in config.yaml.`;
  }
  // `.git`, the skills lockfile, `.agents` and `.crow` by name too (later.ts), of every root the target is in (roots
  // may nest): one that does not exist yet (a hooks directory, a first skill) must not be created.
  const first = (r: string) => path.relative(r, target).split(path.sep)[0] ?? "";
  const guardedRoot = roots.find((r) => inside(target, r) && GUARDED_NAMES.has(first(r)));
  const locked =
    guardedRoot !== undefined
      ? path.join(guardedRoot, first(guardedRoot))
      : protectedPaths(policy, roots).find((p) => inside(target, p));
  if (locked) {
    return `Error: ${shown} was not written: ${locked} stays read-only in the sandbox (.git, the skills lockfile, .agents and Crow's own configuration run code or reach later sessions outside it). Ask the user to make this change.`;
  }
  return undefined;
}
