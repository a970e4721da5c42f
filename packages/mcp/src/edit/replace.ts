/**
 * The cascade driver: runs the nine matchers in order and applies the first unique match (or, with
 * `replaceAll`, every match of the first matcher that finds any). Pure: strings in, string out, no I/O.
 */
import { blockAnchor, contextAware, searchBlockAnchor, searchContextAware } from "./anchors.js";
import { runAsync, runSync, type Work, WorkBudget, WorkBudgetExhausted } from "./budget.js";
import { formatClosest, searchClosestLines } from "./closest.js";
import { commonIndent, reindent } from "./indent.js";
import {
  escapeNormalized,
  exact,
  indentationFlexible,
  lineTrimmed,
  type Matcher,
  type MatcherSearch,
  multiOccurrence,
  searchEscapeNormalized,
  searchIndentationFlexible,
  searchLineTrimmed,
  searchWhitespaceNormalized,
  trimmedBoundary,
  whitespaceNormalized,
} from "./matchers.js";
import { lineIndexAt, type Source, type Span, searchLines, toSource } from "./source.js";

export type MatcherName =
  | "exact"
  | "line-trimmed"
  | "block-anchor"
  | "whitespace-normalized"
  | "indentation-flexible"
  | "escape-normalized"
  | "trimmed-boundary"
  | "context-aware"
  | "multi-occurrence";

/** One entry of the cascade. */
export interface MatcherEntry {
  readonly name: MatcherName;
  readonly match: Matcher;
  /** The same matcher as a budgeted search that can pause; {@link replace} uses this one. */
  readonly search: MatcherSearch;
  /**
   * Line-oriented matches get whole-line treatment: a span preceded only by indentation is widened to the line
   * start, a `find` ending in a newline consumes the line's newline, and `new_string` is re-indented when the
   * block sits at a different indentation than `find`.
   */
  readonly lineBased: boolean;
}

/** The cascade, in upstream's order. */
export const MATCHERS: readonly MatcherEntry[] = [
  { name: "exact", match: exact, search: linear(exact), lineBased: false },
  { name: "line-trimmed", match: lineTrimmed, search: searchLineTrimmed, lineBased: true },
  { name: "block-anchor", match: blockAnchor, search: searchBlockAnchor, lineBased: true },
  { name: "whitespace-normalized", match: whitespaceNormalized, search: searchWhitespaceNormalized, lineBased: true },
  { name: "indentation-flexible", match: indentationFlexible, search: searchIndentationFlexible, lineBased: true },
  { name: "escape-normalized", match: escapeNormalized, search: searchEscapeNormalized, lineBased: false },
  { name: "trimmed-boundary", match: trimmedBoundary, search: linear(trimmedBoundary), lineBased: false },
  { name: "context-aware", match: contextAware, search: searchContextAware, lineBased: true },
  { name: "multi-occurrence", match: multiOccurrence, search: linear(multiOccurrence), lineBased: false },
];

/** A matcher that is one scan of the content with `indexOf` (fast at any size) as a search, charged one step. */
function linear(matcher: Matcher): MatcherSearch {
  return function* (source, find, budget) {
    if (budget.charge(1)) yield;
    return matcher(source, find);
  };
}

/** One applied replacement, in coordinates of the content before the edit. */
export interface Replacement {
  start: number;
  end: number;
  /** The text written in place of `content.slice(start, end)`. */
  text: string;
}

/** The result of a successful {@link replace}. */
export interface EditOutcome {
  /** The new content. */
  content: string;
  /** The matcher that produced the match. */
  matcher: MatcherName;
  /** The replacements, sorted by position. */
  replacements: Replacement[];
  /** Set when `new_string` was re-indented: the indentation of `old_string` and of the file's block. */
  indentShift?: { from: string; to: string };
}

export type EditErrorKind = "identical" | "empty-old" | "not-found" | "ambiguous" | "gave-up";

/** A refused edit; `message` is meant for the model (the tool prefixes "Error: "). */
export class EditError extends Error {
  constructor(
    readonly kind: EditErrorKind,
    message: string,
  ) {
    super(message);
    this.name = "EditError";
  }
}

/** How a {@link replace} may search: its work budget (one per edit by default). */
export interface ReplaceOptions {
  budget?: WorkBudget;
}

/**
 * Replaces `oldString` with `newString` in `content` (all LF-normalized). The first matcher that finds exactly
 * one match wins; a matcher that finds several is skipped in favour of a stricter reading further down the
 * cascade, and if none is unique the edit fails with "found N times" (N from the first ambiguous matcher). With
 * `replaceAll` the first matcher that finds anything wins and all its non-overlapping matches are replaced.
 *
 * An empty `oldString` is only valid on empty content (filling an empty file). The fuzzy search (and the closest
 * lines shown when nothing matches) does at most the budget's work: past it the edit fails as "gave-up". Throws
 * {@link EditError}.
 */
export function replace(
  content: string,
  oldString: string,
  newString: string,
  replaceAll = false,
  options: ReplaceOptions = {},
): EditOutcome {
  return runSync(searchReplacement(content, oldString, newString, replaceAll, options.budget ?? new WorkBudget()));
}

/**
 * {@link replace}, handing the event loop back every few milliseconds of a long fuzzy search (`pause`, a turn of
 * the event loop by default), so other work sharing the thread is not held up. Same outcome as {@link replace}.
 */
export function replaceAsync(
  content: string,
  oldString: string,
  newString: string,
  replaceAll = false,
  options: ReplaceOptions & { pause?: () => Promise<void> } = {},
): Promise<EditOutcome> {
  const budget = options.budget ?? new WorkBudget();
  return runAsync(searchReplacement(content, oldString, newString, replaceAll, budget), options.pause);
}

/** {@link replace} as a search that can pause. */
export function* searchReplacement(
  content: string,
  oldString: string,
  newString: string,
  replaceAll: boolean,
  budget: WorkBudget,
): Work<EditOutcome> {
  if (oldString === newString) throw new EditError("identical", "old_string and new_string must be different");
  if (oldString === "") {
    if (content === "")
      return { content: newString, matcher: "exact", replacements: [{ start: 0, end: 0, text: newString }] };
    throw new EditError(
      "empty-old",
      "old_string is empty, which only creates a new file or fills an empty one, but this file has content. Pass the text to replace as old_string, or use the write tool to replace the whole file.",
    );
  }
  const source = toSource(content);
  let ambiguous: { count: number; spans: Span[] } | undefined;
  for (const entry of MATCHERS) {
    let spans: Span[];
    try {
      spans = yield* entry.search(source, oldString, budget);
    } catch (error) {
      if (error instanceof WorkBudgetExhausted) throw gaveUp(entry.name, error);
      throw error;
    }
    if (spans.length === 0) continue;
    if (!replaceAll && spans.length > 1) {
      ambiguous ??= { count: spans.length, spans };
      continue;
    }
    return apply(source, entry, replaceAll ? nonOverlapping(spans) : spans, oldString, newString);
  }
  if (ambiguous) {
    const lines = [...new Set(ambiguous.spans.map((span) => lineIndexAt(source, span.start) + 1))];
    const where =
      lines.length === 1
        ? `All of them are on line ${lines[0]}.`
        : `The matches start on lines ${lines.slice(0, 10).join(", ")}${lines.length > 10 ? ", …" : ""}.`;
    throw new EditError(
      "ambiguous",
      `old_string found ${ambiguous.count} times. Provide more context to identify the correct match.\n${where} Include more surrounding lines in old_string to pick one, or set replace_all=true to change every occurrence.`,
    );
  }
  let hint: string;
  try {
    hint = formatClosest(yield* searchClosestLines(source, oldString, budget));
  } catch (error) {
    if (!(error instanceof WorkBudgetExhausted)) throw error;
    hint =
      "The search for similar lines gave up (the file is too large or too repetitive to compare in reasonable time). Read the part of the file you want to change again and copy old_string exactly from it.";
  }
  throw new EditError("not-found", `old_string not found in file\n${hint}`);
}

/** The refusal when the fuzzy search spends its budget: what happened and what the model can do instead. */
function gaveUp(matcher: MatcherName, exhausted: WorkBudgetExhausted): EditError {
  const millions = Math.round(exhausted.spent / 1_000_000);
  return new EditError(
    "gave-up",
    `old_string did not match exactly, and the fuzzy search gave up (in the ${matcher} matcher, after about ${millions} million steps) without finding a unique match: the file is too large or too repetitive around old_string's lines to compare them all. Give a shorter old_string copied exactly from the file (a few distinctive lines, no line-number prefixes), or make the change with the terminal (sed, a script).`,
  );
}

function nonOverlapping(spans: Span[]): Span[] {
  const sorted = [...spans].sort((a, b) => a.start - b.start || b.end - a.end);
  const kept: Span[] = [];
  for (const span of sorted) {
    const previous = kept[kept.length - 1];
    if (!previous || span.start >= previous.end) kept.push(span);
  }
  return kept;
}

function apply(source: Source, entry: MatcherEntry, spans: Span[], oldString: string, newString: string): EditOutcome {
  const { content } = source;
  const replacements: Replacement[] = [];
  let indentShift: EditOutcome["indentShift"];
  for (const span of [...spans].sort((a, b) => a.start - b.start)) {
    const adapted = entry.lineBased ? adaptToLines(source, span, oldString, newString) : undefined;
    const text = adapted?.text ?? (span.rewrite ? span.rewrite(newString) : newString);
    if (adapted?.shift) indentShift ??= adapted.shift;
    replacements.push({ start: adapted?.start ?? span.start, end: adapted?.end ?? span.end, text });
  }
  const parts: string[] = [];
  let at = 0;
  for (const r of replacements) {
    parts.push(content.slice(at, r.start), r.text);
    at = r.end;
  }
  parts.push(content.slice(at));
  return {
    content: parts.join(""),
    matcher: entry.name,
    replacements,
    ...(indentShift ? { indentShift } : {}),
  };
}

/**
 * Whole-line treatment of a fuzzy match (see {@link MatcherEntry.lineBased}). Upstream inserted `new_string`
 * verbatim over the matched block, which dropped or doubled indentation and newlines.
 */
function adaptToLines(
  source: Source,
  span: Span,
  oldString: string,
  newString: string,
): { start: number; end: number; text: string; shift?: { from: string; to: string } } {
  const { content } = source;
  let { start, end } = span;
  let text = span.rewrite ? span.rewrite(newString) : newString;

  const lineStart = source.starts[lineIndexAt(source, start)] as number;
  if (content.slice(lineStart, start).trim() === "") start = lineStart;

  if (oldString.endsWith("\n") && !content.slice(start, end).endsWith("\n")) {
    const rest = /^[ \t]*\n/.exec(content.slice(end, end + 256));
    if (rest) end += rest[0].length;
    else if (text.endsWith("\n")) text = text.slice(0, -1);
  }

  if (start !== lineStart) return { start, end, text };
  const from = commonIndent(searchLines(oldString));
  const to = commonIndent(content.slice(start, end).split("\n"));
  if (from === to) return { start, end, text };
  return { start, end, text: reindent(text, from, to), shift: { from, to } };
}
