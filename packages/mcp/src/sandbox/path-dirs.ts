/**
 * The user's PATH inside the sandbox. The sandboxed shell gets the host's `/` read-only, but some places are its own
 * there: a private /tmp, and (network off) private /run and /var/run; the policy's hidden entries are covered. A PATH
 * folder in one of these would vanish, and with it the user's tools (`mytool: command not found`) or their Node
 * (`node` falls through to /usr/bin/node, another version). So each such folder is mounted read-only at its place,
 * unless it is the private place itself or lies in a hidden entry: those stay hidden, and the session's notice
 * ({@link pathNotice}) names them and says why.
 */
import { realpathSync, statSync } from "node:fs";
import path from "node:path";
import type { SandboxPolicy } from "./policy.js";
import { inside } from "./which.js";

/** A PATH folder the sandboxed shell cannot see, and why. */
export interface HiddenPathEntry {
  entry: string;
  reason: string;
}

/** What the sandbox does with the PATH: folders to mount read-only (`source` at `target`), and those it hides. */
export interface PathVisibility {
  mounts: { source: string; target: string }[];
  hidden: HiddenPathEntry[];
}

function realDir(dir: string): string | undefined {
  try {
    const real = realpathSync(dir);
    return statSync(real).isDirectory() ? real : undefined;
  } catch {
    return undefined;
  }
}

/** The places that are the sandbox's own (not the host's) under `policy`. */
function privatePlaces(policy: SandboxPolicy): string[] {
  return policy.network ? ["/tmp"] : ["/tmp", "/run", "/var/run"];
}

/** What {@link pathVisibility} must know of the shell besides its policy. */
export interface PathPlaces {
  /** Folders the sandbox shows itself (the shell's directory, the writable roots): nothing to mount in them. */
  shown?: readonly string[];
  /**
   * Folders that stay private however PATH reads (the temporary directory, where Crow keeps its sockets and each
   * shell's private /tmp): a PATH folder holding one of them is not mounted.
   */
  keep?: readonly string[];
}

/**
 * How the sandbox treats each folder of `searchPath` (the shell's PATH) under `policy`: nothing for the sandbox off,
 * for relative entries (they follow the shell's directory), for missing folders and for folders the shell sees
 * anyway; a read-only mount for a folder in a private place; hidden, with the reason, for a private place itself, a
 * folder holding one of `keep`, or a folder in one of the policy's hidden entries.
 */
export function pathVisibility(
  policy: SandboxPolicy,
  searchPath: string | undefined,
  { shown = [], keep = [] }: PathPlaces = {},
): PathVisibility {
  const result: PathVisibility = { mounts: [], hidden: [] };
  if (policy.mode === "off" || !searchPath) return result;
  const places = privatePlaces(policy);
  const hiddenEntries = (policy.hidden ?? []).map((entry) => realDir(entry) ?? path.resolve(entry));
  const kept = keep.map((dir) => realDir(dir) ?? path.resolve(dir));
  const masked = (p: string) => places.some((place) => inside(p, place)) && !shown.some((s) => inside(p, s));
  const seen = new Set<string>();
  for (const entry of searchPath.split(":")) {
    if (!path.isAbsolute(entry) || seen.has(entry)) continue;
    seen.add(entry);
    const real = realDir(entry);
    if (real === undefined) continue;
    const written = path.resolve(entry);
    const secret = hiddenEntries.find((h) => inside(real, h) || inside(written, h));
    if (secret !== undefined) {
      result.hidden.push({ entry, reason: `it lies in ${secret}, which the sandbox hides` });
      continue;
    }
    const place = places.find((p) => p === real || p === written);
    if (place !== undefined) {
      result.hidden.push({ entry, reason: `${place} is the sandbox's own, private one` });
      continue;
    }
    if (!masked(real) && !masked(written)) continue;
    const private_ = kept.find((k) => inside(k, real) || inside(k, written));
    if (private_ !== undefined) {
      result.hidden.push({ entry, reason: `it holds ${private_}, private to each sandboxed shell` });
      continue;
    }
    if (masked(real)) result.mounts.push({ source: real, target: real });
    if (written !== real && masked(written)) result.mounts.push({ source: real, target: written });
  }
  return result;
}

/** bwrap's arguments mounting the PATH folders of {@link pathVisibility} read-only. */
export function pathMountArgs(visibility: PathVisibility): string[] {
  return visibility.mounts.flatMap((m) => ["--ro-bind", m.source, m.target]);
}

/** The session's notice about the PATH folders the sandboxed shell cannot see; undefined when it sees them all. */
export function pathNotice(visibility: PathVisibility): string | undefined {
  if (visibility.hidden.length === 0) return undefined;
  const named = visibility.hidden.map((h) => `${h.entry} (${h.reason})`).join("; ");
  return `Sandbox: the shell's PATH lacks ${named}: commands from there are not found inside the sandbox. Put them in another folder on PATH, or turn the sandbox off for this session.`;
}
