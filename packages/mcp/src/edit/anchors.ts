/**
 * The anchor-based matchers: the first and last lines of `find` must match a block of the content exactly (after
 * trimming) and the lines between them are allowed to differ somewhat. These are the riskiest matchers of the
 * cascade, so unlike upstream they demand real similarity and blocks of a comparable size.
 */
import { distance } from "fastest-levenshtein";
import { isBlank } from "./indent.js";
import type { Matcher } from "./matchers.js";
import { asSource, lineSpan, type Span, searchLines, trimmedAt } from "./source.js";

/**
 * Minimum similarity of the middle lines for a block-anchor match. Upstream accepted a single candidate at 0.0,
 * which replaced hallucinated code between two `}` lines (opencode #14046); 0.6 still accepts a block with a
 * few misremembered lines but refuses unrelated code.
 */
export const BLOCK_ANCHOR_THRESHOLD = 0.6;
/** Several candidates must be separated by this much similarity (or see {@link clearlyBetter}), or it is ambiguous. */
export const BLOCK_ANCHOR_MARGIN = 0.1;
/** Lines are compared up to this many characters, and the middle text up to MAX_MIDDLE_CHARS, to bound the cost. */
export const MAX_COMPARED_LINE = 200;
export const MAX_MIDDLE_CHARS = 8000;

/**
 * 3. Block anchor: the first and last lines of `find` (at least 3 lines, a trailing newline not counted) match
 * exactly after trimming, the block has about as many lines as `find` (± a quarter, at least ± 1), and the
 * non-blank middle lines are at least {@link BLOCK_ANCHOR_THRESHOLD} similar (Levenshtein over the joined
 * lines with whitespace removed, so blank lines and a line inserted or dropped do not skew it). When several blocks qualify, the
 * best one wins only if it is clearly better; otherwise all close contenders are returned (ambiguous).
 */
export const blockAnchor: Matcher = (input, find) => {
  const source = asSource(input);
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
  const candidates: Array<{ first: number; last: number; score: number }> = [];
  for (let i = 0; i + minSize <= n; i++) {
    if (trimmedAt(source, i) !== first) continue;
    // Of the blocks starting here, keep the most similar: nested blocks often share a closing line such as `}`.
    let best: { last: number; score: number } | undefined;
    for (let j = i + minSize - 1; j <= Math.min(n - 1, i + maxSize - 1); j++) {
      if (trimmedAt(source, j) !== last) continue;
      const score = similarity(wantedMiddle, middleText(source.lines, i + 1, j));
      if (!best || score > best.score) best = { last: j, score };
    }
    if (best && best.score >= BLOCK_ANCHOR_THRESHOLD) candidates.push({ first: i, ...best });
  }
  if (candidates.length <= 1) return candidates.map((c) => lineSpan(source, c.first, c.last));
  const top = Math.max(...candidates.map((c) => c.score));
  const contenders = candidates.filter((c) => c.score === top || !clearlyBetter(top, c.score));
  return contenders.map((c) => lineSpan(source, c.first, c.last));
};

/**
 * 8. Context aware: a block of exactly as many lines as `find` (at least 3), first and last lines equal after
 * trimming, and at least half of the middle line pairs that are not both blank equal after trimming.
 */
export const contextAware: Matcher = (input, find) => {
  const source = asSource(input);
  const wanted = searchLines(find);
  const k = wanted.length;
  if (k < 3) return [];
  const first = (wanted[0] as string).trim();
  const last = (wanted[k - 1] as string).trim();
  if (first === "" || last === "") return [];
  const spans: Span[] = [];
  for (let i = 0; i + k <= source.lines.length; i++) {
    if (trimmedAt(source, i) !== first || trimmedAt(source, i + k - 1) !== last) continue;
    let total = 0;
    let matching = 0;
    for (let t = 1; t < k - 1; t++) {
      const a = trimmedAt(source, i + t);
      const b = (wanted[t] as string).trim();
      if (a === "" && b === "") continue;
      total++;
      if (a === b) matching++;
    }
    if (total === 0 || matching / total >= 0.5) spans.push(lineSpan(source, i, i + k - 1));
  }
  return spans;
};

/**
 * Whether a candidate scoring `best` wins over one scoring `other`: by {@link BLOCK_ANCHOR_MARGIN}, or by being at
 * most half as far from the find. The second rule separates near-duplicate blocks (generated code, test cases)
 * when the model's copy is close to one of them, while true ties remain ambiguous.
 */
export function clearlyBetter(best: number, other: number): boolean {
  return best - other >= BLOCK_ANCHOR_MARGIN || 1 - other >= 2 * (1 - best);
}

/** The non-blank lines `from..to-1` without whitespace, each capped, joined by newlines and capped in total. */
function middleText(lines: readonly string[], from: number, to: number): string {
  const parts: string[] = [];
  let length = 0;
  for (let i = from; i < to && length < MAX_MIDDLE_CHARS; i++) {
    const line = lines[i] ?? "";
    if (isBlank(line)) continue;
    // Whitespace is dropped: spacing differences are tolerated anyway, and counting them would let a block that
    // differs in an identifier look as close as the intended one that differs in spacing.
    const part = line.replace(/\s+/g, "").slice(0, MAX_COMPARED_LINE);
    parts.push(part);
    length += part.length + 1;
  }
  return parts.join("\n").slice(0, MAX_MIDDLE_CHARS);
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
