/**
 * Git sources, with the machine's git: one bare cache repository per URL under `<crow home>/cache/skills-git`,
 * shallow fetches of the ref asked for, and the commit's tree extracted through `git archive` (so links in the
 * repository are skipped like any other link; see tar.ts).
 *
 * URLs and refs come from data (a lockfile, a marketplace), so each is checked here again whatever the caller did
 * (checks.ts: no option, a real ref, a git URL of an allowed transport), and every operand follows `--`; git runs
 * with GIT_ALLOW_PROTOCOL (no `ext::` or remote helper), no terminal prompt, in Crow's home. The git program is
 * core's findGit: the one on PATH outside the project (a `.venv/bin/git` a sandboxed session wrote never runs), with
 * PATH cut the same way for the programs git starts (ssh).
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { errorText } from "@crow/core";
import { findGit } from "@crow/core/internal";
import { commitProblem, GIT_PROTOCOLS, gitUrlProblem, refProblem } from "./checks.js";
import { SourceError } from "./errors.js";
import { MAX_UNPACKED_BYTES, mib } from "./limits.js";
import { unpackTar } from "./tar.js";

/** What running git needs: Crow's home (its cwd and cache), the environment, the directories git is never taken from. */
interface GitOptions {
  home: string;
  env: NodeJS.ProcessEnv;
  untrusted: readonly string[];
}

function program(options: GitOptions) {
  try {
    return findGit(options.untrusted, options.env.PATH ?? "/usr/bin:/bin");
  } catch {
    throw new SourceError(
      `git was not found on PATH outside ${options.untrusted.join(", ")} (a git inside the project is never run): install git system-wide`,
    );
  }
}

function git(args: string[], options: GitOptions): Promise<Buffer> {
  const found = program(options);
  return new Promise((resolve, reject) => {
    execFile(
      found.file,
      args,
      {
        cwd: options.home,
        env: { ...options.env, PATH: found.searchPath, GIT_TERMINAL_PROMPT: "0", GIT_ALLOW_PROTOCOL: GIT_PROTOCOLS },
        encoding: "buffer",
        maxBuffer: MAX_UNPACKED_BYTES,
      },
      (error, stdout, stderr) => {
        const command = args[0] === "-C" ? args[2] : args[0];
        if ((error as NodeJS.ErrnoException | null)?.code === "ERR_CHILD_PROCESS_STDIO_MAXBUFFER") {
          reject(
            new SourceError(`git ${command}: more than ${mib(MAX_UNPACKED_BYTES)} MiB: refused, nothing installed`),
          );
        } else if (error) {
          const detail = stderr.toString().trim() || error.message;
          reject(new SourceError(`git ${command} failed: ${detail}`));
        } else resolve(stdout);
      },
    );
  });
}

/** Throws SourceError when `url` or `ref` is not something git may be handed (see checks.ts). */
function checkOperands(url: string, ref: string | undefined): void {
  const problem = gitUrlProblem(url) ?? (ref === undefined ? undefined : refProblem(ref));
  if (problem) throw new SourceError(`refused to run git: ${problem}`);
}

async function cacheRepo(url: string, options: GitOptions): Promise<string> {
  const dir = path.join(
    options.home,
    "cache",
    "skills-git",
    createHash("sha256").update(url).digest("hex").slice(0, 24),
  );
  if (!existsSync(path.join(dir, "HEAD"))) {
    await mkdir(dir, { recursive: true });
    await git(["init", "--bare", "-q", "--", dir], options);
  }
  return dir;
}

/**
 * Fetches `ref` (a branch, tag or commit; none: the remote's HEAD) of `url` into the cache, shallowly, and returns
 * the commit it names. A commit the server will not hand out by id is looked for in a full fetch of the default branch.
 */
export async function gitCommit(url: string, ref: string | undefined, options: GitOptions) {
  checkOperands(url, ref);
  const repo = await cacheRepo(url, options);
  try {
    await git(["-C", repo, "fetch", "-q", "--depth", "1", "--no-tags", "--", url, ref ?? "HEAD"], options);
    return (await git(["-C", repo, "rev-parse", "--verify", "FETCH_HEAD^{commit}"], options)).toString().trim();
  } catch (error) {
    if (!ref || commitProblem(ref)) {
      const what = ref ? `"${ref}" of ${url}` : url;
      throw new SourceError(`cannot fetch ${what}: ${errorText(error)}`);
    }
    await git(["-C", repo, "fetch", "-q", "--no-tags", "--", url, "HEAD"], options);
    try {
      await git(["-C", repo, "cat-file", "-e", "--", `${ref}^{commit}`], options);
    } catch {
      throw new SourceError(`commit ${ref} is not in ${url} (was the history rewritten?)`);
    }
    return ref;
  }
}

/**
 * Writes the tree of `commit` (fetched by {@link gitCommit}) into `dir`; resolves to the entries left out (links,
 * anything not a file or folder), as tar.ts reports them.
 */
export async function gitExtract(url: string, commit: string, dir: string, options: GitOptions): Promise<string[]> {
  checkOperands(url, undefined);
  const problem = commitProblem(commit);
  if (problem) throw new SourceError(`refused to run git: ${problem}`);
  const repo = await cacheRepo(url, options);
  const tar = await git(["-C", repo, "archive", "--format=tar", "--", commit], options);
  return unpackTar(tar, dir, `${url} at ${commit.slice(0, 12)}`);
}
