import { randomBytes } from "node:crypto";
import type { Stats } from "node:fs";
import { chmod, chown, lstat, mkdir, realpath, rename, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";

/** Thrown by {@link writeFileAtomic} when the target exists and is not a regular file. */
export class NotRegularFileError extends Error {
  constructor(
    readonly file: string,
    readonly stats: Stats,
  ) {
    super(`${file} is not a regular file`);
    this.name = "NotRegularFileError";
  }
}

/**
 * Writes `data` to `file` atomically: a temporary file in the same directory, then rename, so a reader (or a
 * crash) never sees half a file. An existing file keeps its mode and, where permitted, its owner. A symbolic
 * link is followed and its target is replaced, so the link itself survives.
 *
 * Only a regular file (or nothing) is replaced: renaming over a FIFO, a device node (`/dev/null` when running as
 * root) or a socket would destroy it, so those throw {@link NotRegularFileError} and stay as they are. Throws
 * Node fs errors otherwise; callers translate them into messages for the model.
 */
export async function writeFileAtomic(file: string, data: string | Uint8Array): Promise<void> {
  const target = await resolveTarget(file);
  const existing = await stat(target).catch(() => undefined);
  if (existing && !existing.isFile()) throw new NotRegularFileError(target, existing);
  const temp = path.join(path.dirname(target), `.${path.basename(target)}.crow-${randomBytes(6).toString("hex")}.tmp`);
  try {
    await writeFile(temp, data, { mode: existing ? existing.mode & 0o7777 : 0o666 });
    if (existing) {
      await chmod(temp, existing.mode & 0o7777);
      await chown(temp, existing.uid, existing.gid).catch(() => undefined);
    }
    await rename(temp, target);
  } catch (error) {
    await rm(temp, { force: true }).catch(() => undefined);
    throw error;
  }
}

async function resolveTarget(file: string): Promise<string> {
  const link = await lstat(file).catch(() => undefined);
  if (link?.isSymbolicLink()) return realpath(file);
  return file;
}

/** `mkdir -p` for the directory that will hold `file`. */
export async function ensureParent(file: string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
}
