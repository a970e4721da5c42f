/**
 * Git sources, with the machine's git: one bare cache repository per URL under `<crow home>/cache/skills-git`,
 * shallow fetches of the ref asked for, and the commit's tree extracted through `git archive` (so links in the
 * repository are skipped like any other link; see tar.ts).
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { SourceError } from "./errors.js";
import { unpackTar } from "./tar.js";

function git(args: string[], env: NodeJS.ProcessEnv, cwd?: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    execFile(
      "git",
      args,
      { cwd, env: { ...env, GIT_TERMINAL_PROMPT: "0" }, encoding: "buffer", maxBuffer: 512 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error) {
          const detail = stderr.toString().trim() || error.message;
          reject(new SourceError(`git ${args[0] === "-C" ? args[2] : args[0]} failed: ${detail}`));
        } else resolve(stdout);
      },
    );
  });
}

async function cacheRepo(url: string, home: string, env: NodeJS.ProcessEnv): Promise<string> {
  const dir = path.join(home, "cache", "skills-git", createHash("sha256").update(url).digest("hex").slice(0, 24));
  if (!existsSync(path.join(dir, "HEAD"))) {
    await mkdir(dir, { recursive: true });
    await git(["init", "--bare", "-q", dir], env);
  }
  return dir;
}

/**
 * Fetches `ref` (a branch, tag or commit; none: the remote's HEAD) of `url` into the cache, shallowly, and returns
 * the commit it names. A commit the server will not hand out by id is looked for in a full fetch of the default branch.
 */
export async function gitCommit(url: string, ref: string | undefined, home: string, env: NodeJS.ProcessEnv) {
  const repo = await cacheRepo(url, home, env);
  try {
    await git(["-C", repo, "fetch", "-q", "--depth", "1", "--no-tags", url, ref ?? "HEAD"], env);
    return (await git(["-C", repo, "rev-parse", "FETCH_HEAD^{commit}"], env)).toString().trim();
  } catch (error) {
    if (!ref || !/^[0-9a-f]{40}$/.test(ref)) {
      const what = ref ? `"${ref}" of ${url}` : url;
      throw new SourceError(`cannot fetch ${what}: ${(error as Error).message}`);
    }
    await git(["-C", repo, "fetch", "-q", "--no-tags", url, "HEAD"], env);
    try {
      await git(["-C", repo, "cat-file", "-e", `${ref}^{commit}`], env);
    } catch {
      throw new SourceError(`commit ${ref} is not in ${url} (was the history rewritten?)`);
    }
    return ref;
  }
}

/** Writes the tree of `commit` (fetched by {@link gitCommit}) into `dir`. */
export async function gitExtract(url: string, commit: string, home: string, dir: string, env: NodeJS.ProcessEnv) {
  const repo = await cacheRepo(url, home, env);
  await unpackTar(await git(["-C", repo, "archive", "--format=tar", commit], env), dir);
}
