/**
 * The file content as the matchers see it: the text plus a line index, built once per edit and shared by every
 * matcher of the cascade so that none of them re-splits a large file. All offsets are UTF-16 indices into
 * `content`, which is LF-normalized by the caller (see eol.ts).
 */
export interface Source {
  readonly content: string;
  /** `content.split("\n")`: a final newline yields a last empty line. */
  readonly lines: readonly string[];
  /** Offset of the first character of each line. */
  readonly starts: readonly number[];
  /** Each line with surrounding whitespace removed (computed on first use). */
  readonly trimmed: readonly string[];
  /** {@link compactLine} of line `i`, computed on first use of that line ("" past the end). */
  compactAt(i: number): string;
}

/** Lines are compared by similarity up to this many characters, to bound the cost. */
export const MAX_COMPARED_LINE = 200;

/**
 * `line` as the similarity measures see it: whitespace dropped (spacing differences are tolerated anyway, and
 * counting them would let a block that differs in an identifier look as close as the intended one that differs in
 * spacing), cut at {@link MAX_COMPARED_LINE}. Empty exactly when the line is blank.
 */
export function compactLine(line: string): string {
  return line.replace(/\s+/g, "").slice(0, MAX_COMPARED_LINE);
}

/** A matched region of the content: `content.slice(start, end)` is what gets replaced. */
export interface Span {
  start: number;
  end: number;
  /**
   * Adjusts `new_string` for this match when the matcher knows how the model's text differed from the file
   * (e.g. the escape matcher unescapes it the same way it unescaped `old_string`).
   */
  rewrite?: (replacement: string) => string;
}

/** Builds the shared line index for `content`. */
export function toSource(content: string): Source {
  // Everything is computed on first use: the exact matcher, which settles most edits, needs none of it.
  let lines: string[] | undefined;
  let starts: number[] | undefined;
  let trimmed: string[] | undefined;
  let compact: Array<string | undefined> | undefined;
  const getLines = () => {
    lines ??= content.split("\n");
    return lines;
  };
  return {
    content,
    get lines() {
      return getLines();
    },
    get starts() {
      if (!starts) {
        const all = getLines();
        starts = new Array<number>(all.length);
        let offset = 0;
        for (let i = 0; i < all.length; i++) {
          starts[i] = offset;
          offset += (all[i] as string).length + 1;
        }
      }
      return starts;
    },
    get trimmed() {
      trimmed ??= getLines().map((line) => line.trim());
      return trimmed;
    },
    compactAt(i: number) {
      // Filled up front: an array written far past its end becomes a slow dictionary in V8.
      compact ??= new Array<string | undefined>(getLines().length).fill(undefined);
      let line = compact[i];
      if (line === undefined) {
        line = compactLine(getLines()[i] ?? "");
        compact[i] = line;
      }
      return line;
    },
  };
}

/** Accepts either a prepared {@link Source} or raw content, so matchers are easy to call on their own. */
export function asSource(input: Source | string): Source {
  return typeof input === "string" ? toSource(input) : input;
}

/** The span covering lines `first..last` (inclusive), from the start of `first` to the end of `last`, no newline. */
export function lineSpan(source: Source, first: number, last: number): Span {
  return { start: source.starts[first] as number, end: (source.starts[last] as number) + lineAt(source, last).length };
}

/** Line `i` of the source ("" past the end, which callers avoid). */
export function lineAt(source: Source, i: number): string {
  return source.lines[i] ?? "";
}

/** Trimmed line `i` of the source. */
export function trimmedAt(source: Source, i: number): string {
  return source.trimmed[i] ?? "";
}

/**
 * The lines of a search string. A trailing newline ends the last line instead of adding an empty one, so a
 * three-line snippet copied with its final newline is three lines, not four (opencode #14632 checked the line
 * count before dropping it).
 */
export function searchLines(find: string): string[] {
  const lines = find.split("\n");
  if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop();
  return lines;
}

/** Index of the line containing `offset` (binary search over line starts). */
export function lineIndexAt(source: Source, offset: number): number {
  let lo = 0;
  let hi = source.starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((source.starts[mid] as number) <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** Every non-overlapping occurrence of `needle` in `haystack`, scanning left to right. */
export function occurrences(haystack: string, needle: string): Span[] {
  const spans: Span[] = [];
  if (needle === "") return spans;
  for (let i = haystack.indexOf(needle); i !== -1; i = haystack.indexOf(needle, i + needle.length)) {
    spans.push({ start: i, end: i + needle.length });
  }
  return spans;
}
