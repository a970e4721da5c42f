/**
 * "Did you mean": when no matcher finds `old_string`, the lines of the file that look most like it, so the model
 * can correct its copy instead of guessing again.
 */
import { distance } from "fastest-levenshtein";
import { MAX_COMPARED_LINE } from "./anchors.js";
import { lineAt, type Source, searchLines, trimmedAt } from "./source.js";

/** At most this many lines are shown. */
export const MAX_SHOWN_LINES = 12;
/** Below this similarity nothing is suggested (a random line is not a useful hint). */
export const MIN_SUGGESTION_SCORE = 0.4;
/** Only the first few non-blank lines of old_string are compared, which keeps the scan linear in the file. */
const COMPARED_LINES = 3;

/** The block of the file most similar to `find`. */
export interface Closest {
  /** 0-based index of the first shown line. */
  first: number;
  /** The lines as they are in the file. */
  lines: string[];
  /** Mean similarity of the compared lines, in [0, 1]. */
  score: number;
}

/**
 * Finds the window of the file whose lines best resemble the first non-blank lines of `find` (trimmed, compared
 * by Levenshtein similarity at their relative offsets). Returns undefined when `find` has no text or nothing
 * reaches {@link MIN_SUGGESTION_SCORE}.
 */
export function closestLines(source: Source, find: string): Closest | undefined {
  const wanted = searchLines(find);
  const picks: Array<{ offset: number; text: string }> = [];
  for (let o = 0; o < wanted.length && picks.length < COMPARED_LINES; o++) {
    const text = (wanted[o] as string).trim().slice(0, MAX_COMPARED_LINE);
    if (text !== "") picks.push({ offset: o, text });
  }
  const head = picks[0];
  if (!head) return undefined;
  const n = source.lines.length;
  let best: { at: number; score: number } | undefined;
  for (let i = 0; i < n; i++) {
    const at = i - head.offset;
    if (at < 0) continue;
    const s0 = lineSimilarity(trimmedAt(source, i), head.text);
    // The other lines can add at most 1 each: skip positions that cannot beat the best so far.
    if (best && (s0 + picks.length - 1) / picks.length <= best.score) continue;
    let sum = s0;
    for (const pick of picks.slice(1)) {
      const line = at + pick.offset;
      sum += line < n ? lineSimilarity(trimmedAt(source, line), pick.text) : 0;
    }
    const score = sum / picks.length;
    if (!best || score > best.score) best = { at, score };
  }
  if (!best || best.score < MIN_SUGGESTION_SCORE) return undefined;
  const count = Math.min(wanted.length, MAX_SHOWN_LINES);
  const lines: string[] = [];
  for (let i = best.at; i < Math.min(n, best.at + count); i++) lines.push(lineAt(source, i));
  // The empty "line" after a final newline is not a line of the file.
  while (lines.length > 1 && best.at + lines.length === n && lines[lines.length - 1] === "") lines.pop();
  return { first: best.at, lines, score: best.score };
}

function lineSimilarity(line: string, wanted: string): number {
  const a = line.slice(0, MAX_COMPARED_LINE);
  if (a === wanted) return 1;
  const longer = Math.max(a.length, wanted.length);
  return longer === 0 ? 1 : 1 - distance(a, wanted) / longer;
}

/** The "did you mean" paragraph for a not-found error, in the read tool's `N→line` format. */
export function formatClosest(closest: Closest | undefined): string {
  if (!closest) {
    return "No similar lines were found in the file. Read the file again: it may not contain what you expect.";
  }
  const lastLine = closest.first + closest.lines.length;
  const pad = String(lastLine).length;
  const range = closest.lines.length === 1 ? `line ${closest.first + 1}` : `lines ${closest.first + 1}-${lastLine}`;
  const shown = closest.lines
    .map((line, i) => {
      const text = line.length > 2 * MAX_COMPARED_LINE ? `${line.slice(0, 2 * MAX_COMPARED_LINE)}…` : line;
      return `${String(closest.first + i + 1).padStart(pad)}\u2192${text}`;
    })
    .join("\n");
  return `Did you mean ${range} (the closest match, ${Math.round(closest.score * 100)}% similar)?\n${shown}\nRe-read the file and copy old_string exactly, including whitespace and indentation (without the line-number prefixes).`;
}
