/**
 * A policy's `binds` (a directory shown at a second path, as `crow eval` shows a trial's workspace at `/app`): the
 * sandbox root they need, and the host path the file tools use for a path under a bind's target.
 *
 * bwrap cannot create a mount point on the read-only bind of the host's `/`, so a policy with binds gets a root of its
 * own (a tmpfs holding a read-only bind of each top-level entry of the host's `/`, links as links), on which the
 * targets can be created; it is made read-only once everything is mounted.
 */
import { readdirSync, readlinkSync } from "node:fs";
import path from "node:path";
import type { SandboxPolicy } from "./policy.js";

/** bwrap.ts's `inside`, here so that bwrap.ts can import this file without a cycle. */
function inside(child: string, root: string): boolean {
  const rel = path.relative(root, child);
  return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
}

/** Top-level entries bwrap sets up itself (or that a bind replaces). */
const OWN = new Set(["proc", "dev", "tmp"]);

/**
 * bwrap's arguments for a `/` of the sandbox's own: each top-level entry of the host's `/` bound read-only (links as
 * links), except the names in `skip` (set up otherwise, or mount points to create). The caller makes it read-only
 * with `--remount-ro /` once everything is mounted on it.
 */
export function hostRootArgs(skip: ReadonlySet<string>): string[] {
  const args: string[] = [];
  for (const entry of readdirSync("/", { withFileTypes: true })) {
    if (skip.has(entry.name)) continue;
    const full = `/${entry.name}`;
    if (entry.isSymbolicLink()) args.push("--symlink", readlinkSync(full), full);
    else args.push("--ro-bind", full, full);
  }
  return args;
}

/**
 * The top-level entries of the host's `/` a rebuilt root leaves out because the policy hides them (`/home`, `/srv`,
 * `/work`…, as `crow eval` does): absent, not empty — an empty folder would still say the host has one by that name.
 * None without binds: the host's `/` is then bound whole, and a hidden entry becomes an empty one on it.
 */
export function leftOutOfRoot(policy: SandboxPolicy): Set<string> {
  if ((policy.binds ?? []).length === 0) return new Set();
  return new Set((policy.hidden ?? []).filter((entry) => path.dirname(entry) === "/" && entry !== "/"));
}

/** bwrap's arguments for the sandbox's `/`: the host's, read-only; with binds, rebuilt so the targets can exist. */
export function rootArgs(policy: SandboxPolicy): string[] {
  const binds = policy.binds ?? [];
  if (binds.length === 0) return ["--ro-bind", "/", "/"];
  const replaced = binds.map((b) => b.target.split("/")[1] ?? "");
  const hidden = [...leftOutOfRoot(policy)].map((entry) => entry.slice(1));
  return hostRootArgs(new Set([...OWN, ...replaced, ...hidden]));
}

/** bwrap's arguments mounting the binds (after the writable roots: a source inside one is writable). */
export function bindArgs(policy: SandboxPolicy, writable: readonly string[]): string[] {
  const args: string[] = [];
  for (const bind of policy.binds ?? []) {
    args.push(writable.some((root) => inside(bind.source, root)) ? "--bind" : "--ro-bind", bind.source, bind.target);
  }
  return args;
}

/** The last argument before the namespaces: the rebuilt root goes read-only once the targets are mounted on it. */
export function sealRootArgs(policy: SandboxPolicy): string[] {
  return (policy.binds ?? []).length > 0 ? ["--remount-ro", "/"] : [];
}

/** Where the file tools find `file` (absolute, normalized): under a bind's target, the same place under its source. */
export function hostPath(file: string, policy: SandboxPolicy | undefined): string {
  for (const bind of policy?.binds ?? []) {
    if (inside(file, bind.target)) return path.join(bind.source, path.relative(bind.target, file));
  }
  return file;
}
