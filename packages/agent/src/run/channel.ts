/**
 * One output stream of `crow run` with its cursor position tracked: whether it is at the start of a line, and its
 * column, so the answer can be word-wrapped to the terminal width (`writeWrapped`) instead of being cut mid-word by
 * the terminal. Escape sequences take no width.
 */
import type { Sink } from "./output.js";

// biome-ignore lint/suspicious/noControlCharactersInRegex: matching escape sequences
const ESCAPE = /^\x1b\[[0-9;?]*[ -/]*[@-~]/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: stripping escape sequences
const ESCAPES = /\x1b\[[0-9;?]*[ -/]*[@-~]/g;

export class Channel {
  atLineStart = true;
  /** Counts writes (whether something was printed after a given point: the plan is redrawn in place only if not). */
  writes = 0;
  private column = 0;
  /** The word of wrapped text being written (shown as it streams; moved to the next line if it outgrows this one). */
  private word = "";
  private wordWidth = 0;
  /** The column where the word (with the spaces before it) started. */
  private wordStart = 0;
  /** Spaces after the last word: written before the next one, dropped when that one starts a new line. */
  private gap = "";
  /** Escape sequences waiting for the next visible character. */
  private styles = "";

  constructor(
    private readonly sink: Sink,
    /** Runs before every write (erases the spinner). */
    private readonly before: () => void,
    /** The terminal's width, when text written with `writeWrapped` should be wrapped to it. */
    private readonly width?: () => number,
  ) {}

  write(text: string): void {
    this.endWord();
    this.emit(text);
  }

  /**
   * Writes text wrapped at spaces to the width (as `write` without one). Each character shows at once; a word that
   * outgrows the line is erased and written again at the start of the next (a word longer than a line is cut by the
   * terminal).
   */
  writeWrapped(text: string): void {
    if (!this.width) {
      this.write(text);
      return;
    }
    // One column spare: the cursor never sits in the terminal's pending-wrap state, so moving back is exact.
    const width = this.width() - 1;
    for (let i = 0; i < text.length; i++) {
      // A whole code point: half an emoji's surrogate pair, written alone, reaches the terminal as U+FFFD.
      const codePoint = text.codePointAt(i) ?? 0;
      const char = codePoint > 0xffff ? text.slice(i, i + 2) : (text[i] as string);
      if (char.length === 2) i++;
      if (char === "\x1b") {
        // Styling goes out with the next visible character, after the spaces before it.
        const sequence = ESCAPE.exec(text.slice(i))?.[0] ?? char;
        this.styles += sequence;
        i += sequence.length - 1;
      } else if (char === " ") {
        this.endWord();
        this.gap += " ";
      } else if (char === "\n") {
        this.endWord();
        this.gap = "";
        this.emit("\n");
      } else {
        if (this.wordWidth === 0) this.wordStart = this.column;
        const styled = this.styles + char;
        this.styles = "";
        this.word += styled;
        this.wordWidth++;
        if (
          this.wordStart + this.gap.length + this.wordWidth <= width ||
          this.wordStart === 0 ||
          this.wordWidth > width
        ) {
          this.emit(this.gap + styled);
        } else {
          const shown = this.column - this.wordStart;
          if (shown > 0) this.emit(`\x1b[${shown}D\x1b[K`);
          this.emit(`\n${this.word}`);
          this.wordStart = 0;
        }
        this.gap = "";
      }
    }
  }

  newline(): void {
    this.endWord();
    this.gap = "";
    if (!this.atLineStart) this.emit("\n");
  }

  private endWord(): void {
    this.emit(this.styles);
    this.styles = "";
    this.word = "";
    this.wordWidth = 0;
  }

  private emit(text: string): void {
    if (!text) return;
    this.before();
    this.sink.write(text);
    this.writes++;
    this.atLineStart = text.endsWith("\n");
    const lineStart = Math.max(text.lastIndexOf("\n"), text.lastIndexOf("\r"));
    const visible = text.slice(lineStart + 1).replace(ESCAPES, "").length;
    this.column = lineStart >= 0 ? visible : this.column + visible;
  }
}
