/**
 * What of the host a trial sees: its system directories only, read-only — the programs, libraries and configuration
 * a task's scripts and the agent's shell run with — and nothing a person or another project keeps. A benchmark is
 * only as honest as what the agent cannot see: a copy of a suite (its `solution/solve.sh`) under /srv, /var/tmp, a
 * home or a project folder must be unreachable.
 *
 * Shown, read-only: /usr, /bin, /sbin, /lib*, /etc, /opt, /sys, and of /var only lib/ and cache/ (package
 * databases, caches; /var/run and /var/lock as the links they are). Everything else of the host's `/` is left out:
 * /home, /root, /srv, /mnt, /media, /var/tmp, /var/www, /var/mail, /var/log, any other top-level folder (/work,
 * /data…) and file. /tmp, /run, /dev and /proc are the sandbox's own. A path the trial itself needs (its workspace,
 * the terminal's directory under the temporary directory) keeps its ancestors: only their other entries go.
 */
import { accessSync, constants, type Dirent, readdirSync, realpathSync } from "node:fs";
import path from "node:path";

/** Top-level entries shown (read-only) or the sandbox's own (proc, dev, tmp, run). */
const SHOWN_TOP = new Set([
  "usr",
  "bin",
  "sbin",
  "lib",
  "lib32",
  "lib64",
  "libx32",
  "etc",
  "opt",
  "sys",
  "var",
  "proc",
  "dev",
  "tmp",
  "run",
]);

/**
 * The top-level folders a trial has of its own (a private tmpfs, its own /proc and /dev): what the host keeps there is
 * out of its view as much as a home is (a pyenv-like `python3` under /tmp on the host's PATH is not the trial's).
 */
const SANDBOX_OWN = ["/tmp", "/run", "/dev", "/proc"];

/** Entries of /var shown: package databases and caches (and the links /var/run, /var/lock). */
const SHOWN_VAR = new Set(["lib", "cache", "run", "lock"]);

function entries(dir: string): Dirent[] {
  try {
    return readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
}

/** Whether `dir` is `target` or one of its ancestors. */
function leadsTo(dir: string, target: string): boolean {
  return target === dir || target.startsWith(`${dir}/`);
}

/**
 * The host paths a trial must not see (absolute; directories and files, never links — a link's target is judged
 * where it lies). `keep`: absolute paths that must stay reachable (an ancestor of one is descended into, and only
 * its other entries are listed); {@link exposedPaths} are kept too.
 */
export function unseenHostPaths(keep: readonly string[]): string[] {
  keep = [...keep, ...exposedPaths()];
  const unseen: string[] = [];
  const walk = (dir: string, shown: (name: string) => boolean) => {
    for (const entry of entries(dir)) {
      const full = path.join(dir, entry.name);
      if (entry.isSymbolicLink()) continue;
      if (full === "/var") {
        walk(full, (name) => SHOWN_VAR.has(name));
        continue;
      }
      if (shown(entry.name)) continue;
      if (keep.some((k) => k === full)) continue;
      if (entry.isDirectory() && keep.some((k) => leadsTo(full, k))) walk(full, () => false);
      else unseen.push(full);
    }
  };
  walk("/", (name) => SHOWN_TOP.has(name));
  return unseen;
}

/** `entry`'s real path, or `entry` when it does not resolve. */
export function realOrSelf(entry: string): string {
  try {
    return realpathSync(entry);
  } catch {
    return entry;
  }
}

/** Where a trial finds the commands an image would have and the host lacks (python images' `python`, `pip`). */
export const SHIMS = "/.crow-eval/bin";

/**
 * The commands a Python image has that a Debian host may lack — `python` and `pip` — as links to the first `python3`
 * and `pip3` on `PATH` that a trial sees (not one under a home it does not: a pyenv there is out of view).
 */
export function pythonShims(searchPath: string | undefined): Array<{ name: string; target: string }> {
  const unseen = [...unseenHostPaths([]), ...SANDBOX_OWN];
  const visible = (dir: string) => !unseen.some((u) => dir === u || dir.startsWith(`${u}/`));
  const find = (command: string) => {
    for (const dir of (searchPath ?? "").split(":")) {
      if (!path.isAbsolute(dir) || !visible(realOrSelf(dir))) continue;
      const candidate = path.join(dir, command);
      try {
        accessSync(candidate, constants.X_OK);
        return candidate;
      } catch {
        // Not here.
      }
    }
    return undefined;
  };
  const shims: Array<{ name: string; target: string }> = [];
  for (const [name, command] of [
    ["python", "python3"],
    ["pip", "pip3"],
  ] as const) {
    const target = find(command);
    if (target) shims.push({ name, target });
  }
  return shims;
}

/** The variable naming host paths every trial sees besides the system directories. */
export const EXPOSE_VARIABLE = "CROW_EVAL_EXPOSE";

/** A `CROW_EVAL_EXPOSE` entry that cannot be shown; the message says which and what to do. */
export class ExposeError extends Error {
  override name = "ExposeError";
}

/**
 * `CROW_EVAL_EXPOSE`: colon-separated absolute paths shown read-only in every trial (its scripts, the agent's shell)
 * besides the system directories — a Python under the home (`~/.pyenv`, uv's `~/.local/share/uv`) that tasks need.
 * Real paths; throws {@link ExposeError} for an entry that is not absolute or does not exist.
 */
export function exposedPaths(env: NodeJS.ProcessEnv = process.env): string[] {
  const entries = (env[EXPOSE_VARIABLE] ?? "").split(":").filter((entry) => entry !== "");
  return entries.map((entry) => {
    if (!path.isAbsolute(entry)) {
      throw new ExposeError(`${EXPOSE_VARIABLE} entry ${entry} is not an absolute path: name it from /`);
    }
    try {
      return realpathSync(entry);
    } catch {
      throw new ExposeError(`${EXPOSE_VARIABLE} entry ${entry} does not exist: fix or drop it`);
    }
  });
}
