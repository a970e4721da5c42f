/**
 * "Did you mean": when no matcher finds `old_string`, the lines of the file that look most like it, so the model
 * can correct its copy instead of guessing again.
 */
import { distance } from "fastest-levenshtein";
import { levenshteinCost, runSync, type Work, WorkBudget } from "./budget.js";
import { lineAt, MAX_COMPARED_LINE, type Source, searchLines, trimmedAt } from "./source.js";

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
  return runSync(searchClosestLines(source, find, new WorkBudget()));
}

/**
 * {@link closestLines} as a search charged to `budget`. Similarities are not computed for positions whose lines'
 * lengths alone rule them out, nor again for a line equal to the one each was last computed for.
 */
export function* searchClosestLines(source: Source, find: string, budget: WorkBudget): Work<Closest | undefined> {
  const wanted = searchLines(find);
  const picks: Pick[] = [];
  for (let o = 0; o < wanted.length && picks.length < COMPARED_LINES; o++) {
    const text = (wanted[o] as string).trim().slice(0, MAX_COMPARED_LINE);
    if (text !== "") picks.push({ offset: o, text, lastLine: undefined, lastScore: 0 });
  }
  const head = picks[0];
  if (!head) return undefined;
  const n = source.lines.length;
  let best: { at: number; score: number } | undefined;
  // The other lines can add at most 1 each: a position whose first line scores `s0` can reach this.
  const reach = (s0: number) => (s0 + picks.length - 1) / picks.length;
  for (let i = 0; i < n; i++) {
    if (budget.charge(1)) yield;
    const at = i - head.offset;
    if (at < 0) continue;
    const text = trimmedAt(source, i).slice(0, MAX_COMPARED_LINE);
    // Skip positions that cannot beat the best so far, by their length alone when that suffices.
    if (best && reach(lengthBound(text, head.text)) <= best.score - ROUNDING) continue;
    if (head.lastLine !== text && budget.charge(levenshteinCost(text.length, head.text.length))) yield;
    const s0 = similarityTo(head, text);
    if (best && reach(s0) <= best.score) continue;
    const others = picks.slice(1).map((pick) => {
      const line = at + pick.offset;
      return { pick, text: line < n ? trimmedAt(source, line).slice(0, MAX_COMPARED_LINE) : undefined };
    });
    // The lengths of the other lines bound what they can add: in a repetitive file most positions stop here.
    if (best) {
      let most = s0;
      for (const { pick, text } of others) most += text === undefined ? 0 : lengthBound(text, pick.text);
      if (most / picks.length <= best.score - ROUNDING) continue;
    }
    let sum = s0;
    for (const { pick, text: other } of others) {
      if (other === undefined) continue;
      if (pick.lastLine !== other && budget.charge(levenshteinCost(other.length, pick.text.length))) yield;
      sum += similarityTo(pick, other);
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

/** A compared line of old_string, and the last line of the file it was compared with (files repeat lines). */
interface Pick {
  offset: number;
  text: string;
  lastLine: string | undefined;
  lastScore: number;
}

/** {@link lineSimilarity} of `line` to the pick, reusing the last result when the line is the same as last time. */
function similarityTo(pick: Pick, line: string): number {
  if (pick.lastLine !== line) {
    pick.lastLine = line;
    pick.lastScore = lineSimilarity(line, pick.text);
  }
  return pick.lastScore;
}

/** Bounds are compared with this margin, so that rounding never makes one skip a position that would win. */
const ROUNDING = 1e-9;

/** An upper bound of {@link lineSimilarity} from the lengths alone. */
function lengthBound(line: string, wanted: string): number {
  const longer = Math.max(line.length, wanted.length);
  return longer === 0 ? 1 : Math.min(line.length, wanted.length) / longer;
}

function lineSimilarity(line: string, wanted: string): number {
  const a = line.slice(0, MAX_COMPARED_LINE);
  if (a === wanted) return 1;
  const longer = Math.max(a.length, wanted.length);
  return longer === 0 ? 1 : 1 - distance(a, wanted) / longer;
}

/** The "did you mean" paragraph for a not-found error, in the read tool's format (line number, tab, line). */
export function formatClosest(closest: Closest | undefined): string {
  if (!closest) {
    return "No similar lines were found in the file. Read the file again: it may not contain what you expect.";
  }
  const lastLine = closest.first + closest.lines.length;
  const range = closest.lines.length === 1 ? `line ${closest.first + 1}` : `lines ${closest.first + 1}-${lastLine}`;
  const shown = closest.lines
    .map((line, i) => {
      const text = line.length > 2 * MAX_COMPARED_LINE ? `${line.slice(0, 2 * MAX_COMPARED_LINE)}…` : line;
      return `${closest.first + i + 1}\t${text}`;
    })
    .join("\n");
  return `Did you mean ${range} (the closest match, ${Math.round(closest.score * 100)}% similar)?\n${shown}\nRe-read the file and copy old_string exactly, including whitespace and indentation (without the line-number prefixes).`;
}
