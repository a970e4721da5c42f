/** Most characters of output one terminal result carries (upstream's MAX_CMD_OUTPUT_SIZE, which it never applied). */
export const MAX_OUTPUT_CHARS = 30_000;

/**
 * `n` with commas between thousands ("30,000"): what `toLocaleString("en-US")` prints, without it. The first call of
 * Intl number formatting maps ICU's locale data, ~7.5 MB of RSS in every crow-mcp (the terminal tool's description
 * called it for each MCP session).
 */
export function withThousands(n: number): string {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/** One piece of output as the model will see it. */
export interface TakenOutput {
  /** The text, with a note in the middle when it was cut. */
  text: string;
  /** Characters left out of the middle (0 when nothing was cut). */
  omittedChars: number;
  /** Lines left out of the middle (counted by newlines). */
  omittedLines: number;
}

function countLines(text: string): number {
  let n = 0;
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) n++;
  return n;
}

/**
 * Cleaned output since it was last taken, capped head+tail: the first half of the budget is kept as it arrives,
 * the last half as a rolling tail, and what falls out of the middle is only counted. Memory stays bounded however
 * much a command prints (50 MB of `yes` costs a few hundred KB at most).
 */
export class OutputBuffer {
  private head = "";
  private tail: string[] = [];
  private tailLength = 0;
  private droppedChars = 0;
  private droppedLines = 0;
  private readonly headLimit: number;
  private readonly tailLimit: number;

  constructor(limit = MAX_OUTPUT_CHARS) {
    this.headLimit = Math.floor(limit / 2);
    this.tailLimit = limit - this.headLimit;
  }

  /** True when nothing arrived since the last {@link take}. */
  get empty(): boolean {
    return this.head.length === 0 && this.tailLength === 0 && this.droppedChars === 0;
  }

  /** The last character received, or "" (used to tell a waiting prompt from a finished line). */
  get lastChar(): string {
    const last = this.tail[this.tail.length - 1] ?? this.head;
    return last.slice(-1);
  }

  push(text: string): void {
    if (!text) return;
    let rest = text;
    if (this.head.length < this.headLimit && this.tailLength === 0) {
      const room = this.headLimit - this.head.length;
      this.head += rest.slice(0, room);
      rest = rest.slice(room);
      if (!rest) return;
    }
    this.tail.push(rest);
    this.tailLength += rest.length;
    // Compact only when the tail is well over budget, so the cost is amortised over many pushes.
    if (this.tailLength > 2 * this.tailLimit + 4096) this.trimTail();
  }

  /** Returns everything since the last take (capped) and starts over. */
  take(): TakenOutput {
    this.trimTail();
    const tail = this.tail.join("");
    const omittedChars = this.droppedChars;
    const omittedLines = this.droppedLines;
    const text =
      omittedChars === 0
        ? this.head + tail
        : `${this.head}\n[... ${withThousands(omittedChars)} characters (${withThousands(omittedLines)} lines) of output omitted here; showing the first ${withThousands(this.head.length)} and last ${withThousands(tail.length)} characters. To see all of it, redirect the output to a file and use grep, head or tail ...]\n${tail}`;
    this.head = "";
    this.tail = [];
    this.tailLength = 0;
    this.droppedChars = 0;
    this.droppedLines = 0;
    return { text, omittedChars, omittedLines };
  }

  private trimTail(): void {
    if (this.tailLength <= this.tailLimit) return;
    const joined = this.tail.join("");
    const cut = joined.length - this.tailLimit;
    const dropped = joined.slice(0, cut);
    this.droppedChars += dropped.length;
    this.droppedLines += countLines(dropped);
    const kept = joined.slice(cut);
    this.tail = [kept];
    this.tailLength = kept.length;
  }
}
