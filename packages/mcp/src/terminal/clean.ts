/**
 * Turning terminal output into text a model can read: escape sequences removed, carriage-return and backspace
 * redraws collapsed to what a terminal would finally show, CRLF normalised to LF. Pure functions plus an incremental
 * line cleaner, so the terminal can clean output as it streams without holding all of it.
 */

// OSC (title, hyperlinks, cwd reports) ends with BEL or ST; unterminated ones end at the line end.
// DCS/SOS/PM/APC end with ST. CSI is ESC [ params intermediates final. Then any other two-byte escape (charset
// selection, keypad modes), the 8-bit CSI, and the remaining C0 controls except \t \n \r \b.
const ESCAPES =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
  /\x1b\][^\x07\x1b\n]*(?:\x07|\x1b\\)?|\x1b[PX^_][^\x1b\n]*(?:\x1b\\)?|\x1b\[[0-?]*[ -/]*[@-~]|\x9b[0-?]*[ -/]*[@-~]|\x1b[ -/]*[0-~]?|[\x00-\x07\x0b\x0c\x0e-\x1f\x7f]/g;
// biome-ignore lint/suspicious/noControlCharactersInRegex: see above
const NEEDS_WORK = /[\x00-\x08\x0b-\x1f\x7f\x9b]/;

/** Removes ANSI/VT escape sequences (CSI, OSC, DCS, …) and stray control characters other than \t \n \r \b. */
export function stripAnsi(text: string): string {
  return text.replace(ESCAPES, "");
}

/**
 * What a terminal line finally shows after carriage returns and backspaces: `"50%\r100%"` → `"100%"`,
 * `"abcdef\rXY"` → `"XYcdef"`, `"ab\bc"` → `"ac"`. `line` must not contain "\n".
 */
export function collapseLine(line: string): string {
  let end = line.length;
  while (end > 0 && line.charCodeAt(end - 1) === 13) end--;
  const body = end === line.length ? line : line.slice(0, end);
  if (!body.includes("\r") && !body.includes("\b")) return body;
  const cells: string[] = [];
  let cursor = 0;
  for (const ch of body) {
    if (ch === "\r") cursor = 0;
    else if (ch === "\b") cursor = Math.max(0, cursor - 1);
    else {
      cells[cursor] = ch;
      cursor++;
    }
  }
  let out = "";
  for (let i = 0; i < cells.length; i++) out += cells[i] ?? " ";
  return out;
}

/** Cleans a block of complete or partial lines (see {@link stripAnsi} and {@link collapseLine}). */
export function cleanText(text: string): string {
  let s = text.includes("\r\n") ? text.replace(/\r+\n/g, "\n") : text;
  if (!NEEDS_WORK.test(s)) return s;
  s = stripAnsi(s);
  if (!s.includes("\r") && !s.includes("\b")) return s;
  return s.split("\n").map(collapseLine).join("\n");
}

/** A line without a newline longer than this is cleaned and passed on in pieces, so memory stays bounded. */
const MAX_PENDING = 64 * 1024;

/**
 * Incremental cleaner: holds back the last, unfinished line (a progress bar may still redraw it, an escape sequence
 * may be cut in half) and passes on cleaned complete lines. {@link flush} releases the unfinished line, e.g. a
 * prompt such as `name? ` that will not get its newline until someone answers.
 */
export class LineCleaner {
  private pending = "";

  constructor(private readonly sink: (text: string) => void) {}

  push(text: string): void {
    const all = this.pending ? this.pending + text : text;
    const cut = all.lastIndexOf("\n");
    if (cut < 0) {
      this.pending = all;
      if (all.length > MAX_PENDING) this.flush();
      return;
    }
    this.pending = all.slice(cut + 1);
    this.emit(cleanText(all.slice(0, cut + 1)));
  }

  /** True while an unfinished line is held back. */
  get hasPending(): boolean {
    return this.pending.length > 0;
  }

  /** Emits the unfinished line as it stands. */
  flush(): void {
    if (!this.pending) return;
    const rest = this.pending;
    this.pending = "";
    this.emit(cleanText(rest));
  }

  /** Forgets the unfinished line. */
  reset(): void {
    this.pending = "";
  }

  private emit(text: string): void {
    if (text) this.sink(text);
  }
}
