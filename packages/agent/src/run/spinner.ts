/**
 * A one-line spinner for a TTY ("⠋ thinking…"), drawn only while nothing else is printed: the owner calls `clear()`
 * before writing and `start()` when waiting again. It draws only at the start of a line; mid-line it shows a single
 * frame character and erases it before the next write, so streamed text is never overwritten.
 */
import { ERASE_LINE_END, type Style } from "./ansi.js";

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
const INTERVAL_MS = 80;
/** Quiet time before the spinner appears (short waits do not flicker). */
const DELAY_MS = 150;

export class Spinner {
  private timer: NodeJS.Timeout | undefined;
  private frame = 0;
  private label = "";
  private atLineStart = true;
  /** Characters drawn after the cursor's home position (0 when nothing is visible). */
  private drawn = 0;
  private since = 0;

  constructor(
    private readonly write: (text: string) => void,
    private readonly style: Style,
  ) {}

  /** Shows the spinner after a short quiet time. `atLineStart` says where the cursor is. */
  start(label: string, atLineStart: boolean): void {
    this.label = label;
    this.atLineStart = atLineStart;
    this.since = Date.now();
    this.timer ??= setInterval(() => this.tick(), INTERVAL_MS);
    this.timer.unref();
  }

  /** Erases the spinner (if drawn) and stops it. */
  stop(): void {
    this.clear();
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Erases the spinner without stopping the timer: call before writing, then `start` again. */
  clear(): void {
    if (this.drawn === 0) return;
    this.write(this.atLineStart ? `\r${ERASE_LINE_END}` : ERASE_LINE_END);
    this.drawn = 0;
  }

  get active(): boolean {
    return this.timer !== undefined;
  }

  private tick(): void {
    if (Date.now() - this.since < DELAY_MS) return;
    const glyph = this.style.cyan(FRAMES[this.frame++ % FRAMES.length] as string);
    if (this.atLineStart) {
      this.write(`\r${glyph} ${this.style.dim(this.label)}${ERASE_LINE_END}`);
      this.drawn = 1;
    } else {
      // Draw one character after the text and step back onto it, so the next write replaces it.
      this.write(`${glyph}\b`);
      this.drawn = 1;
    }
  }
}
