/**
 * Rewind's restore: puts paths of the work tree back as a snapshot has them. git reads the snapshot (`ls-tree`,
 * `cat-file`) and Crow writes the work tree itself, through fs-beneath.ts: the model's commands may be changing the
 * workspace at the same moment (a directory swapped for a link to `~/victim`), and neither a checkout by git (which
 * checks for links by path, then writes by path) nor a delete by path is safe against that.
 */
import { putBeneath, removeBeneath } from "../fs-beneath.js";
import { nulList, objectId, ShadowGitError } from "./git.js";

/** Runs git in the shadow repository (ShadowRepo's runner). */
export type GitRunner = (
  args: readonly string[],
  options?: { input?: string | Buffer },
) => Promise<{ stdout: Buffer; code: number }>;

interface Entry {
  mode: string;
  object: string;
  size: number;
  path: string;
}

/** Paths per `ls-tree` (arguments), and bytes of blobs per `cat-file --batch` (held in memory at once). */
const PATHS_PER_LIST = 200;
const BYTES_PER_BATCH = 64 * 1024 * 1024;

/** The files and links at or below `paths` in `commit` (a path that is a directory there lists its files). */
async function listed(git: GitRunner, commit: string, paths: readonly string[]): Promise<Entry[]> {
  const entries: Entry[] = [];
  for (let i = 0; i < paths.length; i += PATHS_PER_LIST) {
    const chunk = paths.slice(i, i + PATHS_PER_LIST);
    const { stdout } = await git(["ls-tree", "-r", "-l", "-z", "--full-tree", objectId(commit), "--", ...chunk]);
    for (const line of nulList(stdout)) {
      const tab = line.indexOf("\t");
      const [mode = "", , object = "", size = "0"] = line.slice(0, tab).split(/ +/);
      entries.push({ mode, object, size: Number(size) || 0, path: line.slice(tab + 1) });
    }
  }
  return entries;
}

/** The contents of `entries`' blobs, in order (one `cat-file --batch`). */
async function contents(git: GitRunner, entries: readonly Entry[]): Promise<Buffer[]> {
  const { stdout } = await git(["cat-file", "--batch"], { input: entries.map((e) => `${e.object}\n`).join("") });
  const out: Buffer[] = [];
  let at = 0;
  for (const entry of entries) {
    const end = stdout.indexOf(10, at);
    const header = stdout.subarray(at, end).toString("utf8").split(" ");
    const size = Number(header[2]);
    if (end < 0 || header[0] !== entry.object || !Number.isInteger(size)) {
      throw new ShadowGitError(`cat-file answered unexpectedly for ${entry.path}`);
    }
    out.push(stdout.subarray(end + 1, end + 1 + size));
    at = end + 1 + size + 1;
  }
  return out;
}

/**
 * Puts `paths` of `workTree` back as they are in `commit`, bytes and mode: what the snapshot has is written (a file
 * or link renamed into place), the others are removed. Never follows a link in the work tree on the way.
 */
export async function restorePaths(
  git: GitRunner,
  workTree: string,
  commit: string,
  paths: readonly string[],
): Promise<void> {
  const entries = (await listed(git, commit, paths)).filter((e) => e.mode !== "160000");
  // A requested path the snapshot has, as a file or as a directory holding files.
  const there = new Set<string>();
  for (const entry of entries) {
    const parts = entry.path.split("/");
    for (let i = 1; i <= parts.length; i++) there.add(parts.slice(0, i).join("/"));
  }
  let batch: Entry[] = [];
  let bytes = 0;
  const flush = async () => {
    const blobs = await contents(git, batch);
    for (const [i, entry] of batch.entries()) {
      await putBeneath(workTree, entry.path, blobs[i] ?? Buffer.alloc(0), {
        link: entry.mode === "120000",
        executable: entry.mode === "100755",
      });
    }
    batch = [];
    bytes = 0;
  };
  for (const entry of entries) {
    if (batch.length > 0 && bytes + entry.size > BYTES_PER_BATCH) await flush();
    batch.push(entry);
    bytes += entry.size;
  }
  if (batch.length > 0) await flush();
  for (const relative of paths) if (!there.has(relative)) await removeBeneath(workTree, relative);
}
