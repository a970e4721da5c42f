/**
 * Runs `git` for the shadow repository: `--git-dir`/`--work-tree` given explicitly, in an environment built from
 * nothing but PATH, so no GIT_DIR, GIT_INDEX_FILE, GIT_WORK_TREE… of the user's shell can point git at the user's own
 * repository, and no global or system config (filters such as LFS, autocrlf, hooks paths) changes what is stored.
 */
import { spawn } from "node:child_process";

/** The environment of every shadow git process: PATH and settings only, nothing inherited that names a repository. */
export function shadowGitEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return {
    PATH: env.PATH ?? "/usr/bin:/bin",
    ...(env.TMPDIR ? { TMPDIR: env.TMPDIR } : {}),
    LC_ALL: "C",
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    // Paths are file names, never globs (a file named `*.ts` restores that file only).
    GIT_LITERAL_PATHSPECS: "1",
    GIT_TERMINAL_PROMPT: "0",
    GIT_AUTHOR_NAME: "crow",
    GIT_AUTHOR_EMAIL: "crow@localhost",
    GIT_COMMITTER_NAME: "crow",
    GIT_COMMITTER_EMAIL: "crow@localhost",
  };
}

/** A git command that failed: its arguments and what it printed. */
export class ShadowGitError extends Error {
  override name = "ShadowGitError";
}

export interface GitRun {
  stdout: Buffer;
  code: number;
}

/**
 * Runs `git --git-dir=<gitDir> --work-tree=<workTree> <args>` with `input` on stdin. Rejects with ShadowGitError
 * on a non-zero exit unless `allowFailure`.
 */
export function runGit(
  gitDir: string,
  workTree: string,
  args: readonly string[],
  options: { input?: string | Buffer; allowFailure?: boolean } = {},
): Promise<GitRun> {
  return new Promise((resolve, reject) => {
    const child = spawn("git", [`--git-dir=${gitDir}`, `--work-tree=${workTree}`, ...args], {
      cwd: workTree,
      env: shadowGitEnv(),
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

/** NUL-separated output as strings (the last, empty piece dropped). */
export function nulList(stdout: Buffer): string[] {
  const text = stdout.toString("utf8");
  const parts = text.split("\0");
  if (parts.at(-1) === "") parts.pop();
  return parts;
}
