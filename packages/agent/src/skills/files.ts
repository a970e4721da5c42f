/**
 * A skill folder's files as installers see them: regular files only (links are never followed, out of the source or
 * anywhere), their digest, and whole-folder copies that appear atomically (staged next to the target, then renamed).
 */
import { createHash, randomBytes } from "node:crypto";
import type { Dirent } from "node:fs";
import { chmod, copyFile, lstat, mkdir, readdir, readFile, rename, rm } from "node:fs/promises";
import path from "node:path";

/** Folders never part of a skill's content (the `skills` CLI skips the same two when hashing). */
const SKIPPED = new Set([".git", "node_modules"]);

/** One regular file of a skill folder. */
export interface SkillFile {
  /** Relative POSIX path inside the folder. */
  rel: string;
  abs: string;
  executable: boolean;
}

/** The folder's files, sorted by `rel` (code-unit order), and the links that were left out. */
export async function skillFiles(dir: string): Promise<{ files: SkillFile[]; links: string[] }> {
  const files: SkillFile[] = [];
  const links: string[] = [];
  async function walk(rel: string): Promise<void> {
    const entries: Dirent[] = await readdir(path.join(dir, rel), { withFileTypes: true });
    for (const entry of entries) {
      const child = rel ? `${rel}/${entry.name}` : entry.name;
      const abs = path.join(dir, child);
      if (entry.isSymbolicLink()) links.push(child);
      else if (entry.isDirectory()) {
        if (!SKIPPED.has(entry.name)) await walk(child);
      } else if (entry.isFile()) {
        const info = await lstat(abs);
        files.push({ rel: child, abs, executable: (info.mode & 0o111) !== 0 });
      }
    }
  }
  await walk("");
  files.sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
  return { files, links: links.sort() };
}

/** A folder's content digest and each file's own sha256 (hex), by relative path. */
export interface FolderDigest {
  /** sha256 (hex) over every file's relative path then its bytes, files in code-unit order of their paths. */
  digest: string;
  files: Record<string, string>;
}

/** Digests `dir` (see {@link FolderDigest}); the `skills` CLI's `computedHash` is defined the same way. */
export async function digestFolder(dir: string): Promise<FolderDigest> {
  const { files } = await skillFiles(dir);
  const whole = createHash("sha256");
  const each: Record<string, string> = {};
  for (const file of files) {
    const bytes = await readFile(file.abs);
    whole.update(file.rel);
    whole.update(bytes);
    each[file.rel] = createHash("sha256").update(bytes).digest("hex");
  }
  return { digest: whole.digest("hex"), files: each };
}

/** What differs between two digests' files: paths added, removed, changed. */
export interface FileChanges {
  added: string[];
  removed: string[];
  changed: string[];
}

export function diffFiles(before: Record<string, string>, after: Record<string, string>): FileChanges {
  const added = Object.keys(after).filter((f) => !(f in before));
  const removed = Object.keys(before).filter((f) => !(f in after));
  const changed = Object.keys(after).filter((f) => f in before && before[f] !== after[f]);
  return { added: added.sort(), removed: removed.sort(), changed: changed.sort() };
}

/** "2 added (a, b), 1 changed (c)"; "no file changed" when nothing did. */
export function describeChanges(changes: FileChanges): string {
  const parts: string[] = [];
  for (const [label, list] of [
    ["added", changes.added],
    ["removed", changes.removed],
    ["changed", changes.changed],
  ] as const) {
    if (list.length > 0) parts.push(`${list.length} ${label} (${list.join(", ")})`);
  }
  return parts.length > 0 ? parts.join(", ") : "no file changed";
}

/**
 * Copies the skill folder `source` to `target` as one step: the regular files are copied (executable bits kept,
 * links skipped) into a staging folder beside `target`, which then replaces `target` by renames, so a reader sees
 * the old folder or the new one, never half of either.
 */
export async function installFolder(source: string, target: string): Promise<void> {
  const parent = path.dirname(target);
  await mkdir(parent, { recursive: true });
  const tag = randomBytes(6).toString("hex");
  const stage = path.join(parent, `.${path.basename(target)}.staging-${tag}`);
  const old = path.join(parent, `.${path.basename(target)}.old-${tag}`);
  try {
    const { files } = await skillFiles(source);
    for (const file of files) {
      const to = path.join(stage, ...file.rel.split("/"));
      await mkdir(path.dirname(to), { recursive: true });
      await copyFile(file.abs, to);
      await chmod(to, file.executable ? 0o755 : 0o644);
    }
    await mkdir(stage, { recursive: true });
    let hadOld = false;
    try {
      await rename(target, old);
      hadOld = true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
    try {
      await rename(stage, target);
    } catch (error) {
      if (hadOld) await rename(old, target);
      throw error;
    }
    if (hadOld) await rm(old, { recursive: true, force: true });
  } finally {
    await rm(stage, { recursive: true, force: true });
  }
}
