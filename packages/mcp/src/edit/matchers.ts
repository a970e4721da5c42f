/**
 * The text matchers of the edit cascade (the anchor-based two live in anchors.ts). Each is a pure function
 * `(content, find) → spans of the real content` that returns EVERY place it matches, so the driver can tell a
 * unique match from an ambiguous one. Content and `find` are LF-normalized by the caller.
 */

import { escapeRegExp } from "@crow/util";
import { runSync, type Work, WorkBudget } from "./budget.js";
import { dedent, isBlank } from "./indent.js";
import { asSource, lineSpan, occurrences, type Source, type Span, searchLines, trimmedAt } from "./source.js";

/** A matcher: every span of `content` that `find` is taken to mean. */
export type Matcher = (content: Source | string, find: string) => Span[];

/** A matcher as a search that charges its work to a budget and can pause (see budget.ts). */
export type MatcherSearch = (source: Source, find: string, budget: WorkBudget) => Work<Span[]>;

/** The matcher that runs `search` to the end on a budget of its own. */
function synchronous(search: MatcherSearch): Matcher {
  return (input, find) => runSync(search(asSource(input), find, new WorkBudget()));
}

/** 1. The text exactly as given, every non-overlapping occurrence. */
export const exact: Matcher = (input, find) => occurrences(asSource(input).content, find);

/**
 * 2. Whole lines equal after trimming each line: tolerates wrong indentation and trailing whitespace. The span
 * runs from the start of the first line to the end of the last one (without its newline).
 */
export function* searchLineTrimmed(source: Source, find: string, budget: WorkBudget): Work<Span[]> {
  const wanted = searchLines(find).map((line) => line.trim());
  if (wanted.every((line) => line === "")) return [];
  const anchor = wanted.findIndex((line) => line !== "");
  return yield* slideWindows(source, wanted.length, budget, (i) =>
    trimmedAt(source, i + anchor) === wanted[anchor] ? comparedLines(source, i, wanted) : 0,
  );
}
export const lineTrimmed: Matcher = synchronous(searchLineTrimmed);

/**
 * 4. The words of `find` separated by any run of whitespace (newlines included): tolerates doubled spaces, tabs
 * for spaces and re-wrapped lines. A single word is left to the trimmed-boundary matcher, since matching it
 * here would hit every identifier that contains it.
 */
export function* searchWhitespaceNormalized(source: Source, find: string, budget: WorkBudget): Work<Span[]> {
  const words = find.trim().split(/\s+/);
  const head = words[0] ?? "";
  if (words.length < 2) return [];
  // The pattern is tried only where the first word occurs, one place at a time (sticky), so the search can be
  // charged and paused between places; it finds what a global match would (leftmost, non-overlapping). The first two
  // words are tried first: where they do not match (most places) the attempt costs a few steps, not the whole find.
  const pattern = new RegExp(words.map(escapeRegExp).join("\\s+"), "y");
  const opening = new RegExp(words.slice(0, 2).map(escapeRegExp).join("\\s+"), "y");
  const openingCost = head.length + (words[1] ?? "").length + 8;
  const { content } = source;
  const spans: Span[] = [];
  for (let at = content.indexOf(head); at !== -1; ) {
    if (budget.charge(openingCost)) yield;
    opening.lastIndex = at;
    let match: RegExpExecArray | null = null;
    if (opening.test(content)) {
      if (budget.charge(find.length)) yield;
      pattern.lastIndex = at;
      match = pattern.exec(content);
    }
    if (match) spans.push({ start: at, end: at + match[0].length });
    at = content.indexOf(head, match ? at + match[0].length : at + 1);
  }
  return spans;
}
export const whitespaceNormalized: Matcher = synchronous(searchWhitespaceNormalized);

/**
 * 5. The same lines at a different indentation: the common indentation is removed from `find` and from each
 * window of the content, and the rest must be identical (so relative indentation must match, unlike
 * line-trimmed). The driver re-indents `new_string` by the difference.
 */
export function* searchIndentationFlexible(source: Source, find: string, budget: WorkBudget): Work<Span[]> {
  const wanted = searchLines(find);
  if (wanted.every(isBlank)) return [];
  const target = dedent(wanted).join("\n");
  const trimmed = wanted.map((line) => line.trim());
  const anchor = trimmed.findIndex((line) => line !== "");
  // Equal trimmed lines are necessary for equal dedented lines, and much cheaper to test first.
  return yield* slideWindows(source, wanted.length, budget, (i) => {
    if (trimmedAt(source, i + anchor) !== trimmed[anchor]) return 0;
    const compared = comparedLines(source, i, trimmed);
    if (compared <= trimmed.length) return compared;
    // Dedenting the window costs about as much again.
    return dedent(source.lines.slice(i, i + wanted.length)).join("\n") === target ? 2 * compared : -2 * compared;
  });
}
export const indentationFlexible: Matcher = synchronous(searchIndentationFlexible);

const UNESCAPES: Readonly<Record<string, string>> = {
  n: "\n",
  t: "\t",
  r: "\r",
  "'": "'",
  '"': '"',
  "`": "`",
  "\\": "\\",
  $: "$",
  "\n": "\n",
};

/**
 * Undoes one level of string escaping (`\n`, `\t`, `\r`, quotes, backtick, `\\`, `\$`, backslash-newline) in a
 * single left-to-right pass, so `\\n` becomes `\n` and not a newline (upstream's sequential replaces got that
 * wrong).
 */
export function unescapeString(text: string): string {
  return text.replace(/\\([ntr'"`\\$\n])/g, (whole, char: string) => UNESCAPES[char] ?? whole);
}

/**
 * 6. A `find` the model escaped once too often (`\"` for `"`, `\n` for a newline). Its unescaped form is looked
 * up in the content, and `new_string` is unescaped the same way for those matches. Windows of content lines that
 * contain backslashes are also compared after unescaping, for files whose text holds the escapes.
 */
export function* searchEscapeNormalized(source: Source, find: string, budget: WorkBudget): Work<Span[]> {
  const unescaped = unescapeString(find);
  const spans: Span[] = [];
  if (unescaped !== find) {
    for (const span of occurrences(source.content, unescaped)) spans.push({ ...span, rewrite: unescapeString });
  }
  const wanted = searchLines(unescaped);
  const target = wanted.join("\n");
  if (target.trim() === "") return spans;
  // Window spans stop before the last line's newline; a find that ended with one must not add a second.
  const rewrite = unescaped.endsWith("\n")
    ? (replacement: string) => (replacement.endsWith("\n") ? replacement.slice(0, -1) : replacement)
    : undefined;
  // Only windows with a backslash can unescape to something new; a running count skips the rest in O(1).
  if (!source.content.includes("\\")) return spans;
  const slashes = new Int32Array(source.lines.length + 1);
  for (let i = 0; i < source.lines.length; i++) {
    slashes[i + 1] = (slashes[i] as number) + ((source.lines[i] as string).includes("\\") ? 1 : 0);
    if (budget.charge(1)) yield;
  }
  const k = wanted.length;
  for (let i = 0; i + k <= source.lines.length; i++) {
    if (budget.charge(1)) yield;
    if ((slashes[i + k] as number) - (slashes[i] as number) === 0) continue;
    // Text before the first backslash is unchanged by unescaping, so it must begin the target (a first line
    // without any backslash must begin it together with its newline).
    const head = source.lines[i] as string;
    const slash = head.indexOf("\\");
    const prefix = slash !== -1 ? head.slice(0, slash) : k > 1 ? `${head}\n` : head;
    if (!target.startsWith(prefix)) continue;
    // Joining and unescaping costs several steps per character.
    if (budget.charge(6 * target.length)) yield;
    if (unescapeString(source.lines.slice(i, i + k).join("\n")) !== target) continue;
    const span: Span = { ...lineSpan(source, i, i + k - 1), ...(rewrite ? { rewrite } : {}) };
    if (!spans.some((s) => s.start < span.end && span.start < s.end)) spans.push(span);
  }
  return spans.sort((a, b) => a.start - b.start);
}
export const escapeNormalized: Matcher = synchronous(searchEscapeNormalized);

/**
 * 7. `find` with whitespace around it that the file does not have (a blank line copied before or after the
 * snippet). Matches the trimmed text; the same leading and trailing whitespace is then dropped from
 * `new_string` when it has it, so the replacement does not add blank lines either.
 */
export const trimmedBoundary: Matcher = (input, find) => {
  const source = asSource(input);
  const trimmed = find.trim();
  if (trimmed === find || trimmed === "") return [];
  const lead = find.slice(0, find.length - find.trimStart().length);
  const trail = find.slice(find.trimEnd().length);
  const rewrite = (replacement: string) => {
    let text = replacement;
    if (lead !== "" && text.startsWith(lead)) text = text.slice(lead.length);
    if (trail !== "" && text.endsWith(trail)) text = text.slice(0, text.length - trail.length);
    return text;
  };
  return occurrences(source.content, trimmed).map((span) => ({ ...span, rewrite }));
};

/**
 * 9. Exact occurrences that start and end on token boundaries. Upstream's version repeated the exact matcher and
 * could never change the outcome; this one disambiguates an exact `find` that also occurs inside longer
 * identifiers (`count + 1` inside `recount + 1`), and stays ambiguous when several whole-token occurrences exist.
 */
export const multiOccurrence: Matcher = (input, find) => {
  const { content } = asSource(input);
  const first = find[0] ?? "";
  const last = find[find.length - 1] ?? "";
  return occurrences(content, find).filter(
    (span) =>
      !(isWordChar(first) && isWordChar(content[span.start - 1] ?? "")) &&
      !(isWordChar(last) && isWordChar(content[span.end] ?? "")),
  );
};

function isWordChar(char: string): boolean {
  return char !== "" && /[\p{L}\p{N}_$]/u.test(char);
}

/**
 * Slides a window of `size` lines over the content and returns the spans of the windows `accept` takes. `accept`
 * tells how many lines it compared (their cost) and its verdict in one number: 0 when the anchor line alone
 * rejected the window (callers test a non-blank anchor first, one string comparison), more than `size` when it
 * accepts the window, and anything else when it rejects it (negative when more than `size` lines were compared).
 */
export function* slideWindows(
  source: Source,
  size: number,
  budget: WorkBudget,
  accept: (firstLine: number) => number,
): Work<Span[]> {
  const spans: Span[] = [];
  for (let i = 0; i + size <= source.lines.length; i++) {
    const verdict = accept(i);
    if (budget.charge(1 + 3 * Math.abs(verdict))) yield;
    if (verdict > size) spans.push(lineSpan(source, i, i + size - 1));
  }
  return spans;
}

/**
 * How many trimmed lines of the content from `first` on were compared with `wanted` (trimmed) until one differed,
 * that one included; `wanted.length + 1` when all are equal.
 */
function comparedLines(source: Source, first: number, wanted: readonly string[]): number {
  for (let t = 0; t < wanted.length; t++) {
    if (trimmedAt(source, first + t) !== wanted[t]) return t + 1;
  }
  return wanted.length + 1;
}
