/**
 * What the tools that read files for the model (crow-mcp's `read`, the agent's read through the editor) must not
 * read while a sandbox policy is in force: the policy's `hidden` paths (Crow's `.env` and config.yaml, which hold
 * provider keys, and its store, which holds every project's transcripts; in a `crow eval` trial also what lies outside
 * the trial's view and what other users may not read, each named by `hiddenReasons`) and other processes'
 * environments. The sandboxed shell cannot read these either (bwrap hides the files, and its own /proc shows no host
 * process), so a tool must not be the way around it.
 */
import { readdirSync, readFileSync, realpathSync, type Stats, statSync } from "node:fs";
import { tmpdir } from "node:os";
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

/**
 * The places a policy shows the shell — its writable roots and its binds' sources — as real paths. A hidden directory
 * that holds one hides everything in it but that place: `crow eval` hides the host's whole temporary directory from
 * the file tools (other trials' workspaces live there) while the trial's own workspace, inside it, stays theirs.
 */
function shownPlaces(policy: SandboxPolicy): string[] {
  return [...policy.writable, ...(policy.binds ?? []).map((bind) => bind.source)].map(realOrResolved);
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
  const places = shownPlaces(policy);
  // The file itself (a hard link of it) explains best, then the nearest entry above it (Crow's home is hidden inside
  // a home a trial does not see): the longest match.
  let hidden: string | undefined;
  let depth = -1;
  for (const entry of policy.hidden ?? []) {
    const real = realOrResolved(entry);
    const covers = inside(target, real) && !places.some((p) => p !== real && inside(p, real) && inside(target, p));
    const matched =
      stats !== undefined && sameInode(stats, entry) ? Number.POSITIVE_INFINITY : covers ? real.length : -1;
    if (matched > depth) {
      hidden = entry;
      depth = matched;
    }
  }
  if (hidden === undefined) return undefined;
  const reason = policy.hiddenReasons?.[hidden];
  if (reason === "outside-view") {
    return `Error: ${shown} was not read: it is outside what this sandbox shows (this session sees its workspace and the system directories, as in a crow eval trial) and is hidden from tools (${hidden}). Work with the files of the workspace.`;
  }
  if (reason === "private") {
    return `Error: ${shown} was not read: other users may not read it on the host, so it is hidden from tools in this sandbox (${hidden}).`;
  }
  if (realOrResolved(hidden) === realOrResolved(tmpdir())) {
    return `Error: ${shown} was not read: the host's temporary directory is hidden from tools in this sandbox (the shell's /tmp is a private one, which the file tools do not reach). Use the terminal for files under /tmp.`;
  }
  return `Error: ${shown} was not read: it is one of Crow's own files (provider keys or session transcripts) and is hidden from tools (${hidden}). Ask the user for what you need from it.`;
}

/** Files of a hidden directory compared by {@link showsHiddenContent}: at most this many, each up to 64 KiB. */
const MAX_HIDDEN_FILES = 100;
const MAX_HIDDEN_SIZE = 64 * 1024;

function hiddenContents(entry: string, out: string[], shown: readonly string[]): void {
  if (shown.includes(entry)) return;
  let stats: Stats;
  try {
    stats = statSync(entry);
  } catch {
    return;
  }
  if (stats.isFile() && stats.size <= MAX_HIDDEN_SIZE) {
    try {
      out.push(readFileSync(entry, "utf8"));
    } catch {
      // Unreadable to us: then no other process of ours read it either.
    }
  } else if (stats.isDirectory()) {
    let names: string[];
    try {
      names = readdirSync(entry);
    } catch {
      return;
    }
    for (const name of names) {
      if (out.length >= MAX_HIDDEN_FILES) return;
      hiddenContents(path.join(entry, name), out, shown);
    }
  }
}

/**
 * Whether `text`, which another process (the editor) read for a path {@link checkReadable} let through, holds the
 * content of one of the policy's hidden files. That process opens the path itself, after the check, so a link swapped
 * in between could have led it to one: a caller that gets true reads the file itself on a descriptor instead
 * (crow-mcp's `read`), which decides on what it opened. A false alarm (a workspace file that quotes a hidden one)
 * only costs the editor's view of that file.
 */
export function showsHiddenContent(text: string, policy: SandboxPolicy): boolean {
  if (policy.mode === "off" || !policy.hidden?.length) return false;
  const contents: string[] = [];
  const shown = shownPlaces(policy);
  for (const entry of policy.hidden) hiddenContents(realOrResolved(entry), contents, shown);
  const normalized = text.replace(/\r\n/g, "\n");
  return contents.some((content) => {
    const core = content.replace(/\r\n/g, "\n").trim();
    return core !== "" && normalized.includes(core);
  });
}
