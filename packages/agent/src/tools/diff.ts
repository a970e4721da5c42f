import { readFile, stat } from "node:fs/promises";

/** Files bigger than this get no diff (editors choke on huge diffs, and the memory is better spent elsewhere). */
export const MAX_DIFF_BYTES = 1024 * 1024;

/**
 * A file's text for a diff: `null` when it does not exist (a new file), undefined when it cannot be shown as text
 * (unreadable, a directory, binary, too big).
 */
export async function snapshot(file: string): Promise<string | null | undefined> {
  try {
    const stats = await stat(file);
    if (!stats.isFile() || stats.size > MAX_DIFF_BYTES) return undefined;
    const text = await readFile(file, "utf8");
    return text.includes("\0") ? undefined : text;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT" ? null : undefined;
  }
}

/** 1-based number of the first line that differs between two texts (1 when one is empty or they are equal). */
export function firstChangedLine(before: string | null, after: string): number {
  if (!before) return 1;
  const limit = Math.min(before.length, after.length);
  let line = 1;
  for (let i = 0; i < limit; i++) {
    if (before.charCodeAt(i) !== after.charCodeAt(i)) return line;
    if (before.charCodeAt(i) === 10) line++;
  }
  return before.length === after.length ? 1 : line;
}
