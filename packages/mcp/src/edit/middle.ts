/**
 * The middle text of a block-anchor candidate (the lines between its first and last line, as the similarity sees
 * them) and the cheap measures that rule candidates out before a Levenshtein distance: its length, and how far its
 * characters are from the find's.
 */
import { compactLine, type Source } from "./source.js";

/** The middle text is compared up to this many characters (lines up to MAX_COMPARED_LINE), to bound the cost. */
export const MAX_MIDDLE_CHARS = 8000;

/** The middle text of content lines `from..to-1` (see {@link middleText}), from the cached compact lines. */
export function joinedMiddle(source: Source, from: number, to: number): string {
  let text = "";
  let length = 0; // as middleText counts: each part with a newline
  for (let i = from; i < to && length < MAX_MIDDLE_CHARS; i++) {
    const part = source.compactAt(i);
    if (part === "") continue;
    text = length === 0 ? part : `${text}\n${part}`;
    length += part.length + 1;
  }
  return text.slice(0, MAX_MIDDLE_CHARS);
}

/**
 * Running sums of the joined lengths of compact lines over a stretch of the content, extended as the block-anchor
 * scan moves down (each non-blank line adds its length and a newline). A stretch starts afresh after a gap, so
 * lines far from any first line are never compacted.
 */
export class MiddleLengths {
  private start = 0;
  private readonly sums: number[] = [0];

  constructor(private readonly source: Source) {}

  /** Makes the lines `from..to-1` measurable; returns the work done (lines compacted and their characters). */
  cover(from: number, to: number): number {
    if (from > this.start + this.sums.length - 1) {
      this.start = from;
      this.sums.length = 1; // reused: a repetitive file restarts a stretch at every first line
    }
    let work = 0;
    for (let i = this.start + this.sums.length - 1; i < to; i++) {
      const line = this.source.compactAt(i);
      this.sums.push((this.sums[this.sums.length - 1] as number) + (line === "" ? 0 : line.length + 1));
      work += 1 + line.length;
    }
    return work;
  }

  /** The length of the middle text of lines `from..to-1` (covered), capped as the text is. */
  of(from: number, to: number): number {
    const joined = (this.sums[to - this.start] ?? 0) - (this.sums[from - this.start] ?? 0) - 1;
    return Math.min(MAX_MIDDLE_CHARS, Math.max(0, joined));
  }
}

/** The highest similarity two texts of these lengths can have. */
export function lengthBound(a: number, b: number): number {
  const longer = Math.max(a, b);
  return longer === 0 ? 1 : Math.min(a, b) / longer;
}

/** The non-blank lines `from..to-1` without whitespace, each capped, joined by newlines and capped in total. */
export function middleText(lines: readonly string[], from: number, to: number): string {
  const parts: string[] = [];
  let length = 0;
  for (let i = from; i < to && length < MAX_MIDDLE_CHARS; i++) {
    const part = compactLine(lines[i] ?? "");
    if (part === "") continue;
    parts.push(part);
    length += part.length + 1;
  }
  return parts.join("\n").slice(0, MAX_MIDDLE_CHARS);
}

/**
 * The middle text of a block being extended line by line ({@link compactLine}s of the non-blank lines, joined by
 * newlines, cut at {@link MAX_MIDDLE_CHARS}), and a lower bound of its edit distance to a fixed text: the surplus of
 * characters one of them has over the other (an edit operation removes at most one of each side's surplus).
 */
export class MiddleText {
  /** Per UTF-16 code unit: its count in the wanted text, and in this text. */
  private readonly wantedCounts = new Int32Array(65536);
  private readonly counts = new Int32Array(65536);
  private readonly parts: string[] = [];
  private joinedLength = 0;
  private counted = 0;
  /** Characters of this text the wanted text lacks, and characters of the wanted text this text lacks. */
  private surplus = 0;
  private missing = 0;

  constructor(private readonly wanted: string) {
    for (let c = 0; c < wanted.length; c++) {
      const code = wanted.charCodeAt(c);
      this.wantedCounts[code] = (this.wantedCounts[code] as number) + 1;
    }
    this.reset();
  }

  /** Empties the text. */
  reset(): void {
    // Only the counted characters need clearing (cheaper than the whole table for short texts).
    for (const part of this.parts) for (let c = 0; c < part.length; c++) this.counts[part.charCodeAt(c)] = 0;
    this.counts[10] = 0;
    this.parts.length = 0;
    this.joinedLength = 0;
    this.counted = 0;
    this.surplus = 0;
    this.missing = this.wanted.length;
  }

  /** Adds a compact line (a blank one, "", adds nothing). */
  append(line: string): void {
    if (line === "" || this.joinedLength >= MAX_MIDDLE_CHARS) return;
    if (this.parts.length > 0) this.count(10); // the joining newline
    for (let c = 0; c < line.length; c++) this.count(line.charCodeAt(c));
    this.parts.push(line);
    this.joinedLength += line.length + 1;
  }

  /** Whether the similarity to the wanted text can be at least `score` (a cheap bound, never wrong). */
  canReach(score: number): boolean {
    const longer = Math.max(this.wanted.length, this.counted);
    if (longer === 0) return true;
    return 1 - Math.max(this.surplus, this.missing) / longer >= score;
  }

  text(): string {
    return this.parts.join("\n").slice(0, MAX_MIDDLE_CHARS);
  }

  private count(code: number): void {
    if (this.counted >= MAX_MIDDLE_CHARS) return;
    this.counted++;
    const have = this.counts[code] as number;
    this.counts[code] = have + 1;
    if (have < (this.wantedCounts[code] as number)) this.missing--;
    else this.surplus++;
  }
}
