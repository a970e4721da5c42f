import { randomBytes } from "node:crypto";
import { chmod, chown, lstat, mkdir, realpath, rename, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";

/**
 * Writes `data` to `file` atomically: a temporary file in the same directory, then rename, so a reader (or a
 * crash) never sees half a file. An existing file keeps its mode and, where permitted, its owner. A symbolic
 * link is followed and its target is replaced, so the link itself survives.
 *
 * Throws Node fs errors; callers translate them into messages for the model.
 */
export async function writeFileAtomic(file: string, data: string | Uint8Array): Promise<void> {
  const target = await resolveTarget(file);
  const existing = await stat(target).catch(() => undefined);
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
