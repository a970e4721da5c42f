/**
 * The text matchers of the edit cascade (the anchor-based two live in anchors.ts). Each is a pure function
 * `(content, find) → spans of the real content` that returns EVERY place it matches, so the driver can tell a
 * unique match from an ambiguous one. Content and `find` are LF-normalized by the caller.
 */
import { dedent, isBlank } from "./indent.js";
import { asSource, lineSpan, occurrences, type Source, type Span, searchLines, trimmedAt } from "./source.js";

/** A matcher: every span of `content` that `find` is taken to mean. */
export type Matcher = (content: Source | string, find: string) => Span[];

/** 1. The text exactly as given, every non-overlapping occurrence. */
export const exact: Matcher = (input, find) => occurrences(asSource(input).content, find);

/**
 * 2. Whole lines equal after trimming each line: tolerates wrong indentation and trailing whitespace. The span
 * runs from the start of the first line to the end of the last one (without its newline).
 */
export const lineTrimmed: Matcher = (input, find) => {
  const source = asSource(input);
  const wanted = searchLines(find).map((line) => line.trim());
  if (wanted.every((line) => line === "")) return [];
  const anchor = wanted.findIndex((line) => line !== "");
  return slideWindows(
    source,
    wanted.length,
    (i) =>
      trimmedAt(source, i + anchor) === wanted[anchor] && wanted.every((line, t) => trimmedAt(source, i + t) === line),
  );
};

/**
 * 4. The words of `find` separated by any run of whitespace (newlines included): tolerates doubled spaces, tabs
 * for spaces and re-wrapped lines. A single word is left to the trimmed-boundary matcher, since matching it
 * here would hit every identifier that contains it.
 */
export const whitespaceNormalized: Matcher = (input, find) => {
  const source = asSource(input);
  const words = find.trim().split(/\s+/);
  if (words.length < 2) return [];
  const pattern = new RegExp(words.map(escapeRegExp).join("\\s+"), "g");
  const spans: Span[] = [];
  for (const match of source.content.matchAll(pattern)) {
    spans.push({ start: match.index, end: match.index + match[0].length });
  }
  return spans;
};

/**
 * 5. The same lines at a different indentation: the common indentation is removed from `find` and from each
 * window of the content, and the rest must be identical (so relative indentation must match, unlike
 * line-trimmed). The driver re-indents `new_string` by the difference.
 */
export const indentationFlexible: Matcher = (input, find) => {
  const source = asSource(input);
  const wanted = searchLines(find);
  if (wanted.every(isBlank)) return [];
  const target = dedent(wanted).join("\n");
  const trimmed = wanted.map((line) => line.trim());
  const anchor = trimmed.findIndex((line) => line !== "");
  // Equal trimmed lines are necessary for equal dedented lines, and much cheaper to test first.
  return slideWindows(
    source,
    wanted.length,
    (i) =>
      trimmedAt(source, i + anchor) === trimmed[anchor] &&
      trimmed.every((line, t) => trimmedAt(source, i + t) === line) &&
      dedent(source.lines.slice(i, i + wanted.length)).join("\n") === target,
  );
};

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
export const escapeNormalized: Matcher = (input, find) => {
  const source = asSource(input);
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
  const slashes = [0];
  for (let i = 0; i < source.lines.length; i++) {
    slashes.push((slashes[i] as number) + (source.hasBackslash[i] ? 1 : 0));
  }
  const k = wanted.length;
  for (let i = 0; i + k <= source.lines.length; i++) {
    if ((slashes[i + k] as number) - (slashes[i] as number) === 0) continue;
    // Text before the first backslash is unchanged by unescaping, so it must begin the target (a first line
    // without any backslash must begin it together with its newline).
    const head = source.lines[i] as string;
    const slash = head.indexOf("\\");
    const prefix = slash !== -1 ? head.slice(0, slash) : k > 1 ? `${head}\n` : head;
    if (!target.startsWith(prefix)) continue;
    if (unescapeString(source.lines.slice(i, i + k).join("\n")) !== target) continue;
    const span: Span = { ...lineSpan(source, i, i + k - 1), ...(rewrite ? { rewrite } : {}) };
    if (!spans.some((s) => s.start < span.end && span.start < s.end)) spans.push(span);
  }
  return spans.sort((a, b) => a.start - b.start);
};

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

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * Slides a window of `size` lines over the content and returns the spans of the windows `accept` takes. Callers
 * test a non-blank anchor line first, so most windows are rejected by one string comparison.
 */
export function slideWindows(source: Source, size: number, accept: (firstLine: number) => boolean): Span[] {
  const spans: Span[] = [];
  for (let i = 0; i + size <= source.lines.length; i++) {
    if (accept(i)) spans.push(lineSpan(source, i, i + size - 1));
  }
  return spans;
}
