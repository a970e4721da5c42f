/**
 * Runs Crow's own `git` (the shadow repositories of checkpoints, the viewer's patches): the program found on PATH
 * outside every directory the model's commands may write (a fake `git` planted in a workspace `.venv/bin` that is on
 * PATH would otherwise run outside the sandbox, at the end of the turn), `--git-dir`/`--work-tree` given explicitly,
 * in an environment built from nothing, so no GIT_DIR, GIT_CONFIG_PARAMETERS, GIT_EXEC_PATH… of the user's shell can
 * point git at another repository or program, and no system, global or workspace config, hook, fsmonitor or filter
 * runs code or changes what is stored.
 */
import { spawn } from "node:child_process";
import { accessSync, constants, realpathSync, statSync } from "node:fs";
import path from "node:path";

/** The git program Crow runs, and the PATH it runs with (both outside the untrusted directories). */
export interface GitProgram {
  /** Absolute real path of the `git` executable. */
  readonly file: string;
  /** PATH without relative entries and entries inside the untrusted directories. */
  readonly searchPath: string;
}

/** A git command that failed (or a git that cannot be found): its arguments and what it printed. */
export class ShadowGitError extends Error {
  override name = "ShadowGitError";
}

function realOrUndefined(file: string): string | undefined {
  try {
    return realpathSync(file);
  } catch {
    return undefined;
  }
}

function within(child: string, root: string): boolean {
  const rel = path.relative(root, child);
  return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
}

/** PATH as it was when Crow first looked (the process's PATH at start). */
let startPath: string | undefined;
const found = new Map<string, GitProgram>();

/**
 * The `git` on PATH that the model's commands cannot have put there: PATH entries that are relative (`.`, `bin`,
 * empty) or whose real path is inside one of `untrusted` (the workspace, the sandbox's writable directories) are
 * skipped, and so is a `git` whose real path leads into one. Resolved once per set of untrusted directories (PATH is
 * the process's at its first call). Throws {@link ShadowGitError} when there is none.
 */
export function findGit(untrusted: readonly string[], searchPath?: string): GitProgram {
  // The process's PATH: where git is looked for, not a Crow setting (the agent's configuration loader reads none).
  startPath ??= process.env.PATH ?? "/usr/bin:/bin";
  const from = searchPath ?? startPath;
  const roots = [...new Set(untrusted.map((dir) => realOrUndefined(dir) ?? path.resolve(dir)))].sort();
  const key = `${from}\0${roots.join("\0")}`;
  const known = found.get(key);
  if (known) return known;
  const trusted = (file: string | undefined): file is string =>
    file !== undefined && !roots.some((root) => within(file, root));
  const entries = from
    .split(path.delimiter)
    .filter((entry) => path.isAbsolute(entry) && trusted(realOrUndefined(entry)));
  const searchPathOut = [...new Set(entries)].join(path.delimiter);
  for (const entry of entries) {
    const file = realOrUndefined(path.join(entry, "git"));
    if (!trusted(file)) continue;
    try {
      if (!statSync(file).isFile()) continue;
      accessSync(file, constants.X_OK);
    } catch {
      continue;
    }
    const program = { file, searchPath: searchPathOut };
    found.set(key, program);
    return program;
  }
  throw new ShadowGitError(
    "git was not found on PATH outside the workspace and the sandbox's writable directories (a git inside them is " +
      "never run: the model's commands could have written it); install git system-wide or turn checkpoints off " +
      "(checkpoints.enabled: false)",
  );
}

/** The environment of every git process Crow runs: nothing inherited but TMPDIR; PATH only its trusted entries. */
export function shadowGitEnv(program: GitProgram, env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return {
    PATH: program.searchPath,
    ...(env.TMPDIR ? { TMPDIR: env.TMPDIR } : {}),
    LC_ALL: "C",
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_ATTR_NOSYSTEM: "1",
    // Paths are file names, never globs (a file named `*.ts` restores that file only).
    GIT_LITERAL_PATHSPECS: "1",
    GIT_TERMINAL_PROMPT: "0",
    GIT_AUTHOR_NAME: "crow",
    GIT_AUTHOR_EMAIL: "crow@localhost",
    GIT_COMMITTER_NAME: "crow",
    GIT_COMMITTER_EMAIL: "crow@localhost",
  };
}

/**
 * Settings on the command line, above any config file (and passed down to the git processes git starts): no hooks, no
 * fsmonitor program, no submodule recursion (which would run git inside a nested repository, reading its config), no
 * excludes or attributes file but the shadow repository's own.
 */
const SAFE_CONFIG = [
  "core.hooksPath=/dev/null",
  "core.fsmonitor=false",
  "core.excludesFile=/dev/null",
  "core.attributesFile=/dev/null",
  "submodule.recurse=false",
  "diff.ignoreSubmodules=all",
  "status.submoduleSummary=false",
].flatMap((setting) => ["-c", setting]);

export interface GitRun {
  stdout: Buffer;
  code: number;
}

/**
 * Runs `git --git-dir=<gitDir> --work-tree=<workTree> <args>` with `input` on stdin, as `program` (see
 * {@link findGit}). Rejects with ShadowGitError on a non-zero exit unless `allowFailure`.
 */
export function runGit(
  program: GitProgram,
  gitDir: string,
  workTree: string,
  args: readonly string[],
  options: { input?: string | Buffer; allowFailure?: boolean } = {},
): Promise<GitRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(program.file, [...SAFE_CONFIG, `--git-dir=${gitDir}`, `--work-tree=${workTree}`, ...args], {
      cwd: workTree,
      env: shadowGitEnv(program),
      stdio: ["pipe", "pipe", "pipe"],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => err.push(chunk));
    child.on("error", (error) => reject(new ShadowGitError(`git could not be started: ${error.message}`)));
    child.on("close", (code) => {
      const result = { stdout: Buffer.concat(out), code: code ?? 1 };
      if (result.code !== 0 && !options.allowFailure) {
        const said = Buffer.concat(err).toString("utf8").trim();
        reject(new ShadowGitError(`git ${args[0] ?? ""} failed (exit ${result.code}): ${said}`));
      } else resolve(result);
    });
    child.stdin.on("error", () => undefined);
    child.stdin.end(options.input ?? "");
  });
}

/**
 * `value` when it is a full object id (40 hex characters, or 64 in a SHA-256 repository); otherwise throws
 * ShadowGitError. Every commit or tree handed to git as an operand goes through it (or follows `--`): a value that
 * came back from the store could otherwise be an option (`--output=…`) or a revision expression.
 */
export function objectId(value: string): string {
  if (!/^(?:[0-9a-f]{40}|[0-9a-f]{64})$/.test(value)) {
    throw new ShadowGitError(`${JSON.stringify(value.slice(0, 80))} is not a git object id (40 or 64 hex characters)`);
  }
  return value;
}

/** NUL-separated output as strings (the last, empty piece dropped). */
export function nulList(stdout: Buffer): string[] {
  const text = stdout.toString("utf8");
  const parts = text.split("\0");
  if (parts.at(-1) === "") parts.pop();
  return parts;
}
