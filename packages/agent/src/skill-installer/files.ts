/**
 * A skill folder's files as installers see them: regular files only (links are never followed, out of the source or
 * anywhere), read through their open descriptor (a FIFO or device swapped in cannot hold a read up; a file over the
 * cap is refused), never a hard link to one of Crow's secrets, their digest, and whole-folder copies that appear
 * atomically (staged next to the target, then renamed) inside the skills folder opened without following links
 * (folder.ts).
 */
import { createHash, randomBytes } from "node:crypto";
import type { Dirent } from "node:fs";
import { lstat, mkdir, readdir, rename, stat } from "node:fs/promises";
import path from "node:path";
import { type BeneathDir, putBeneath, readInside, removeTreeAt } from "@crow/core/internal";
import { configFiles } from "../config/home.js";
import { SourceError } from "./errors.js";
import { MAX_DOCUMENT_BYTES, MAX_UNPACKED_BYTES, mib } from "./limits.js";

/** Folders never part of a skill's content (the `skills` CLI skips the same two when hashing). */
const SKIPPED = new Set([".git", "node_modules"]);

/** One regular file of a skill folder. */
export interface SkillFile {
  /** Relative POSIX path inside the folder. */
  rel: string;
  abs: string;
  executable: boolean;
}

/**
 * The folder's files, sorted by `rel` with `localeCompare` (the `skills` CLI's order, so `computedHash` is
 * byte-identical: `examples/a.md`, `LICENSE.txt`, `SKILL.md`), and the links that were left out.
 */
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
  files.sort((a, b) => a.rel.localeCompare(b.rel));
  return { files, links: links.sort() };
}

/** A folder's content digest and each file's own sha256 (hex), by relative path. */
export interface FolderDigest {
  /** sha256 (hex) over every file's relative path then its bytes, files in `localeCompare` order of their paths. */
  digest: string;
  files: Record<string, string>;
}

/**
 * Crow's secret files (provider keys in `.env` and config.yaml, transcripts in the default store) by `dev:ino`, each
 * with its path: a file of a skill folder that is another name of one of them (a hard link) is refused, as the
 * sandbox's file rules refuse it by inode.
 */
export async function secretInodes(home: string): Promise<Map<string, string>> {
  const { config, dotenv } = configFiles(home);
  const store = path.join(home, "crow.db");
  const found = new Map<string, string>();
  for (const file of [dotenv, config, store, `${store}-wal`, `${store}-shm`]) {
    const info = await stat(file).catch(() => undefined);
    if (info?.isFile()) found.set(`${info.dev}:${info.ino}`, file);
  }
  return found;
}

/**
 * The bytes of one file of the skill folder `dir`: a regular file inside it (checked on the open descriptor), not
 * over the cap, and not a hard link to one of `secrets` (see {@link secretInodes}). `label` names the skill.
 */
export async function readSkillFile(
  dir: string,
  file: SkillFile,
  secrets: ReadonlyMap<string, string>,
  label: string,
): Promise<Buffer> {
  const read = await readInside(dir, file.abs, MAX_UNPACKED_BYTES + 1);
  if (!read) throw new SourceError(`${label}: ${file.rel} disappeared while it was read`);
  if ("refused" in read) throw new SourceError(`${label}: ${file.rel} was not read: ${read.refused}`);
  const secret = read.info.nlink > 1 ? secrets.get(`${read.info.dev}:${read.info.ino}`) : undefined;
  if (secret) {
    throw new SourceError(
      `${label}: ${file.rel} is a hard link to ${secret} (Crow's secrets): refused, nothing installed; remove it from the folder`,
    );
  }
  if (read.bytes.length > MAX_UNPACKED_BYTES) {
    throw new SourceError(`${label}: ${file.rel} is larger than ${mib(MAX_UNPACKED_BYTES)} MiB: refused`);
  }
  return read.bytes;
}

/**
 * A SKILL.md, plugin or marketplace file as text: a regular file only (a FIFO or device at the name is refused, never
 * waited on), at most {@link MAX_DOCUMENT_BYTES}. Undefined when there is none.
 */
export async function readDocument(file: string): Promise<string | undefined> {
  const read = await readInside(path.dirname(file), file, MAX_DOCUMENT_BYTES + 1);
  if (!read) return undefined;
  if ("refused" in read) throw new SourceError(`${file} was not read: ${read.refused}`);
  if (read.bytes.length > MAX_DOCUMENT_BYTES) {
    throw new SourceError(`${file} is larger than ${mib(MAX_DOCUMENT_BYTES)} MiB: refused`);
  }
  return read.bytes.toString("utf8");
}

/** Digests `dir` (see {@link FolderDigest}); the `skills` CLI's `computedHash` is defined the same way. */
export async function digestFolder(
  dir: string,
  secrets: ReadonlyMap<string, string> = new Map(),
): Promise<FolderDigest> {
  const { files } = await skillFiles(dir);
  const digest = new FolderDigester();
  for (const file of files) digest.add(file.rel, await readSkillFile(dir, file, secrets, dir));
  return digest.done();
}

/** A {@link FolderDigest} built file by file, in the order of {@link skillFiles}. */
class FolderDigester {
  private readonly whole = createHash("sha256");
  private readonly each: Record<string, string> = {};

  add(rel: string, bytes: Buffer): void {
    this.whole.update(rel);
    this.whole.update(bytes);
    this.each[rel] = createHash("sha256").update(bytes).digest("hex");
  }

  done(): FolderDigest {
    return { digest: this.whole.digest("hex"), files: this.each };
  }
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
 * Copies the skill folder `source` into `skills` (the skills folder, held open: folder.ts) as `name`, in one step:
 * each regular file is read through its descriptor ({@link readSkillFile}) and written beneath a staging folder
 * beside the target (executable bits kept, links skipped), which then replaces the target by renames, so a reader
 * sees the old folder or the new one, never half of either. Nothing is written or removed but through `skills`'
 * descriptor: a link planted at the name, or in the old folder, is moved or removed itself, never followed.
 * Returns the digest of what was copied (the bytes read, not a second read of the target).
 */
export async function installFolder(
  source: string,
  skills: BeneathDir,
  name: string,
  secrets: ReadonlyMap<string, string>,
): Promise<FolderDigest> {
  const tag = randomBytes(6).toString("hex");
  const stageName = `.${name}.staging-${tag}`;
  const oldName = `.${name}.old-${tag}`;
  const label = `skill ${name}`;
  try {
    await mkdir(skills.at(stageName));
    const stage = await skills.child(stageName);
    const digest = new FolderDigester();
    try {
      const { files } = await skillFiles(source);
      for (const file of files) {
        const bytes = await readSkillFile(source, file, secrets, label);
        digest.add(file.rel, bytes);
        await putBeneath(stage.here(), file.rel, bytes, { executable: file.executable });
      }
    } finally {
      await stage.close();
    }
    let hadOld = false;
    try {
      await rename(skills.at(name), skills.at(oldName));
      hadOld = true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
    try {
      await rename(skills.at(stageName), skills.at(name));
    } catch (error) {
      if (hadOld) await rename(skills.at(oldName), skills.at(name));
      throw error;
    }
    if (hadOld) await removeTreeAt(skills, oldName);
    return digest.done();
  } finally {
    await removeTreeAt(skills, stageName);
  }
}
