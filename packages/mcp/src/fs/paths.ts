import type { Stats } from "node:fs";
import { lstat, readlink } from "node:fs/promises";
import path from "node:path";

/** Outcome of checking a path argument: the normalized absolute path, or a message for the model. */
export type PathCheck = { ok: true; path: string } | { ok: false; error: string };

/**
 * Validates a `file_path` argument. Paths must be absolute: a relative path is ambiguous for a model that has
 * lost track of the working directory, so instead of guessing we say what it would resolve to.
 */
export function checkAbsolutePath(input: string, cwd: string, parameter = "file_path"): PathCheck {
  if (input.trim() === "") return { ok: false, error: `Error: ${parameter} is empty. Pass an absolute path.` };
  if (input.includes("\0"))
    return { ok: false, error: `Error: ${parameter} contains a NUL byte: ${JSON.stringify(input)}` };
  if (!path.isAbsolute(input)) {
    return {
      ok: false,
      error: `Error: ${parameter} must be an absolute path, got "${input}". In the working directory that is ${path.resolve(cwd, input)}`,
    };
  }
  return { ok: true, path: path.normalize(input) };
}

/**
 * When `file` does not exist, explains whether it is a dangling symbolic link (a common surprise) and returns
 * the sentence to append to "does not exist"; otherwise returns an empty string.
 */
export async function describeMissing(file: string): Promise<string> {
  try {
    const stats = await lstat(file);
    if (stats.isSymbolicLink()) return ` (it is a symbolic link to ${await readlink(file)}, which does not exist)`;
  } catch {
    // Not even a link: nothing to add.
  }
  return "";
}

/** True for the errno codes that mean "you may not", so callers can answer with upstream's wording. */
export function isPermissionError(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === "EACCES" || code === "EPERM";
}

/** The errno code of a Node fs error, if any. */
export function errorCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

/** What kind of file `stats` describe, for messages: "a regular file", "a FIFO (named pipe)", "a character device"… */
export function describeFileType(stats: Stats): string {
  if (stats.isFile()) return "a regular file";
  if (stats.isDirectory()) return "a directory";
  if (stats.isFIFO()) return "a FIFO (named pipe)";
  if (stats.isCharacterDevice()) return "a character device";
  if (stats.isBlockDevice()) return "a block device";
  if (stats.isSocket()) return "a socket";
  return "not a regular file";
}
