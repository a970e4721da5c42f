import type { ToolDiff, ToolDisplay } from "@crow/core";

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

/** The display of a change to one file: the diff, and the file located at its first changed line. */
export function diffDisplay(diff: ToolDiff): Pick<ToolDisplay, "diff" | "locations"> {
  return { diff, locations: [{ path: diff.path, line: firstChangedLine(diff.oldText, diff.newText) }] };
}
