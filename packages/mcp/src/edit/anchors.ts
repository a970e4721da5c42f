/**
 * The anchor-based matchers: the first and last lines of `find` must match a block of the content exactly (after
 * trimming) and the lines between them are allowed to differ somewhat. These are the riskiest matchers of the
 * cascade, so unlike upstream they demand real similarity and blocks of a comparable size.
 */
import { distance } from "fastest-levenshtein";
import { levenshteinCost, runSync, type Work, WorkBudget } from "./budget.js";
import type { Matcher } from "./matchers.js";
import { joinedMiddle, lengthBound, MAX_MIDDLE_CHARS, MiddleLengths, MiddleText, middleText } from "./middle.js";
import { asSource, lineSpan, MAX_COMPARED_LINE, type Source, type Span, searchLines, trimmedAt } from "./source.js";

export { MAX_COMPARED_LINE, MAX_MIDDLE_CHARS };

/**
 * Minimum similarity of the middle lines for a block-anchor match. Upstream accepted a single candidate at 0.0,
 * which replaced hallucinated code between two `}` lines (opencode #14046); 0.6 still accepts a block with a
 * few misremembered lines but refuses unrelated code.
 */
export const BLOCK_ANCHOR_THRESHOLD = 0.6;
/** Several candidates must be separated by this much similarity (or see {@link clearlyBetter}), or it is ambiguous. */
export const BLOCK_ANCHOR_MARGIN = 0.1;
/** A middle text of the find up to this long is compared directly, without the character bound or the cache. */
const SHORT_MIDDLE = 64;
/** At most this many middle texts' scores are remembered (repetitive files repeat them). */
const MAX_CACHED_SCORES = 1024;

/**
 * 3. Block anchor: the first and last lines of `find` (at least 3 lines, a trailing newline not counted) match
 * exactly after trimming, the block has about as many lines as `find` (± a quarter, at least ± 1), and the
 * non-blank middle lines are at least {@link BLOCK_ANCHOR_THRESHOLD} similar (Levenshtein over the joined
 * lines with whitespace removed, so blank lines and a line inserted or dropped do not skew it). When several blocks qualify, the
 * best one wins only if it is clearly better; otherwise all close contenders are returned (ambiguous).
 */
export const blockAnchor: Matcher = (input, find) =>
  runSync(searchBlockAnchor(asSource(input), find, new WorkBudget()));

/**
 * {@link blockAnchor} as a search charged to `budget`. The costly part, a Levenshtein distance per pair of anchor
 * lines, is avoided wherever a cheap bound already decides: the middle text of the blocks starting at a line is
 * built once, line by line, together with how far its characters are from the find's (a lower bound of the edit
 * distance), and a block that cannot reach the threshold, or beat the best block starting at the same line, is
 * never compared; repeated middle texts are scored once.
 */
export function* searchBlockAnchor(source: Source, find: string, budget: WorkBudget): Work<Span[]> {
  const wanted = searchLines(find);
  const k = wanted.length;
  if (k < 3) return [];
  const first = (wanted[0] as string).trim();
  const last = (wanted[k - 1] as string).trim();
  const wantedMiddle = middleText(wanted, 1, k - 1);
  if (first === "" || last === "" || wantedMiddle === "") return [];

  const slack = Math.max(1, Math.ceil(k / 4));
  const minSize = Math.max(3, k - slack);
  const maxSize = k + slack;
  const n = source.lines.length;
  let middle: MiddleText | undefined; // made for the first block worth building (its tables are 512 KB)
  const short = wantedMiddle.length <= SHORT_MIDDLE;
  const scores = new Map<string, number>();
  const candidates: Array<{ first: number; last: number; score: number }> = [];
  // A block whose middle text is much shorter or longer than the find's cannot reach the threshold: its length,
  // from running sums over the lines after the first line, rules it out without building it.
  const lengths = new MiddleLengths(source);
  const lengthAllows = (from: number, to: number) =>
    lengthBound(wantedMiddle.length, lengths.of(from, to)) >= BLOCK_ANCHOR_THRESHOLD;
  for (let i = 0; i + minSize <= n; i++) {
    if (budget.charge(1)) yield;
    if (trimmedAt(source, i) !== first) continue;
    const from = i + minSize - 1;
    const to = Math.min(n - 1, i + maxSize - 1);
    if (!short) {
      if (budget.charge(lengths.cover(i + 1, to))) yield;
      let feasible = false;
      for (let j = from; j <= to && !feasible; j++) feasible = trimmedAt(source, j) === last && lengthAllows(i + 1, j);
      if (budget.charge(to - from + 1)) yield;
      if (!feasible) continue;
    }
    // Of the blocks starting here, keep the most similar: nested blocks often share a closing line such as `}`.
    let best: { last: number; score: number } | undefined;
    if (short) {
      // A short middle text is compared at once: a distance costs no more than the bounds and the lookup would
      // (and similarity() still rules out a text of very different length before computing one).
      for (let j = from; j <= to; j++) {
        if (budget.charge(1)) yield;
        if (trimmedAt(source, j) !== last) continue;
        const text = joinedMiddle(source, i + 1, j);
        if (budget.charge(text.length + levenshteinCost(wantedMiddle.length, text.length))) yield;
        const score = similarity(wantedMiddle, text);
        if (!best || score > best.score) best = { last: j, score };
      }
    } else {
      middle ??= new MiddleText(wantedMiddle);
      middle.reset();
      for (let j = i + 1; j <= to; j++) {
        if (
          j >= from &&
          trimmedAt(source, j) === last &&
          lengthAllows(i + 1, j) &&
          middle.canReach(Math.max(BLOCK_ANCHOR_THRESHOLD, best?.score ?? 0))
        ) {
          const text = middle.text();
          // Joining the text and looking its score up cost a few steps per character.
          if (budget.charge(3 * text.length)) yield;
          let score = scores.get(text);
          if (score === undefined) {
            if (budget.charge(levenshteinCost(wantedMiddle.length, text.length))) yield;
            score = similarity(wantedMiddle, text);
            if (scores.size < MAX_CACHED_SCORES) scores.set(text, score);
          }
          if (!best || score > best.score) best = { last: j, score };
        }
        const line = source.compactAt(j);
        middle.append(line);
        // Counting the characters costs a few steps each.
        if (budget.charge(2 * (1 + line.length))) yield;
      }
    }
    if (best && best.score >= BLOCK_ANCHOR_THRESHOLD) candidates.push({ first: i, ...best });
  }
  if (candidates.length <= 1) return candidates.map((c) => lineSpan(source, c.first, c.last));
  // A loop, not Math.max(...scores): a repetitive file can have more candidates than the stack has room for.
  let top = 0;
  for (const c of candidates) top = Math.max(top, c.score);
  const contenders = candidates.filter((c) => c.score === top || !clearlyBetter(top, c.score));
  return contenders.map((c) => lineSpan(source, c.first, c.last));
}

/**
 * 8. Context aware: a block of exactly as many lines as `find` (at least 3), first and last lines equal after
 * trimming, and at least half of the middle line pairs that are not both blank equal after trimming.
 */
export const contextAware: Matcher = (input, find) =>
  runSync(searchContextAware(asSource(input), find, new WorkBudget()));

/** {@link contextAware} as a search charged to `budget`. */
export function* searchContextAware(source: Source, find: string, budget: WorkBudget): Work<Span[]> {
  const wanted = searchLines(find);
  const k = wanted.length;
  if (k < 3) return [];
  const first = (wanted[0] as string).trim();
  const last = (wanted[k - 1] as string).trim();
  if (first === "" || last === "") return [];
  const wantedTrimmed = wanted.map((line) => line.trim());
  // A middle line can only match if it is one of the find's non-blank middle lines: prefix sums of those (built when
  // the first window's anchors match) bound a window's matches in one step, and rule most windows out at once.
  const nonBlankMiddle = wantedTrimmed.slice(1, k - 1).filter((line) => line !== "");
  const middleLines = new Set(nonBlankMiddle);
  let known: Int32Array | undefined;
  const spans: Span[] = [];
  for (let i = 0; i + k <= source.lines.length; i++) {
    if (budget.charge(1)) yield;
    if (trimmedAt(source, i) !== first || trimmedAt(source, i + k - 1) !== last) continue;
    if (middleLines.size > 0) {
      known ??= yield* knownLineCounts(source, middleLines, budget);
      // At least as many middle pairs count as the find has non-blank middle lines, and half of them must match.
      const most = (known[i + k - 1] as number) - (known[i + 1] as number);
      if (most < 0.5 * nonBlankMiddle.length) continue;
    }
    if (budget.charge(3 * k)) yield;
    let total = 0;
    let matching = 0;
    for (let t = 1; t < k - 1; t++) {
      const a = trimmedAt(source, i + t);
      const b = wantedTrimmed[t] as string;
      if (a === "" && b === "") continue;
      total++;
      if (a === b) matching++;
    }
    if (total === 0 || matching / total >= 0.5) spans.push(lineSpan(source, i, i + k - 1));
  }
  return spans;
}

/**
 * Whether a candidate scoring `best` wins over one scoring `other`: by {@link BLOCK_ANCHOR_MARGIN}, or by being at
 * most half as far from the find. The second rule separates near-duplicate blocks (generated code, test cases)
 * when the model's copy is close to one of them, while true ties remain ambiguous.
 */
export function clearlyBetter(best: number, other: number): boolean {
  return best - other >= BLOCK_ANCHOR_MARGIN || 1 - other >= 2 * (1 - best);
}

/** Prefix sums of the content lines (trimmed) that are in `lines`: lines `a..b-1` hold `counts[b] - counts[a]`. */
function* knownLineCounts(source: Source, lines: ReadonlySet<string>, budget: WorkBudget): Work<Int32Array> {
  const n = source.lines.length;
  const counts = new Int32Array(n + 1);
  for (let i = 0; i < n; i++) {
    counts[i + 1] = (counts[i] as number) + (lines.has(trimmedAt(source, i)) ? 1 : 0);
    if (budget.charge(2)) yield;
  }
  return counts;
}

/**
 * `1 - levenshtein / longer length`, in [0, 1]. When the length difference alone already rules out the threshold
 * the distance is not computed (the bound is returned, which is below the threshold).
 */
export function similarity(a: string, b: string): number {
  if (a === b) return 1;
  const longer = Math.max(a.length, b.length);
  if (longer === 0) return 1;
  const bound = 1 - Math.abs(a.length - b.length) / longer;
  if (bound < BLOCK_ANCHOR_THRESHOLD) return bound;
  return 1 - distance(a, b) / longer;
}
