/**
 * Markdown-ish styling of streamed assistant text for a terminal: headings bold, fenced code cyan, `inline code`
 * cyan, **bold** bold. The text itself is never changed (markers stay visible), so copy-paste gives the original.
 * Works on chunks as they arrive: a trailing `*` or backtick that might start a marker is held back until the next
 * chunk (or `flush`).
 */
import type { Style } from "./ansi.js";

export class MarkdownStyler {
  private lineStart = true;
  /** The current line is a heading (`#`…). */
  private heading = false;
  /** Inside a fenced code block. */
  private fence = false;
  /** The current line is a fence marker line. */
  private fenceLine = false;
  private code = false;
  private bold = false;
  private pending = "";

  constructor(private readonly style: Style) {}

  /** Styles a chunk; returns what can be printed now. */
  push(chunk: string): string {
    const text = this.pending + chunk;
    this.pending = "";
    if (!this.style.enabled) return text;
    // Hold back a trailing run of `*` or backticks: its meaning depends on what follows.
    const held = /(\*+|`+)$/.exec(text);
    const ready = held ? text.slice(0, held.index) : text;
    if (held) this.pending = held[0];
    return this.render(ready);
  }

  /** Everything still held back (end of the message). */
  flush(): string {
    const rest = this.pending;
    this.pending = "";
    const out = this.style.enabled ? this.render(rest) : rest;
    this.heading = false;
    this.code = false;
    this.bold = false;
    this.lineStart = true;
    this.fenceLine = false;
    return out;
  }

  private paint(text: string): string {
    if (!text) return "";
    if (this.fence || this.fenceLine || this.code) return this.style.cyan(text);
    if (this.heading || this.bold) return this.style.bold(text);
    return text;
  }

  private render(text: string): string {
    let out = "";
    let run = "";
    const emit = () => {
      out += this.paint(run);
      run = "";
    };
    let i = 0;
    while (i < text.length) {
      if (this.lineStart) {
        this.lineStart = false;
        const rest = text.slice(i);
        if (rest.startsWith("```")) {
          this.fenceLine = true;
          this.fence = !this.fence;
        } else if (!this.fence && /^#{1,6}\s/.test(rest)) {
          this.heading = true;
        }
      }
      const ch = text[i] as string;
      if (ch === "\n") {
        emit();
        out += "\n";
        this.lineStart = true;
        this.heading = false;
        this.fenceLine = false;
        // Inline code and bold do not span lines in practice; resetting keeps a stray marker from styling the rest.
        this.code = false;
        this.bold = false;
        i++;
        continue;
      }
      if (!this.fence && !this.fenceLine && ch === "`") {
        if (this.code) {
          run += ch;
          emit();
          this.code = false;
        } else {
          emit();
          this.code = true;
          run += ch;
        }
        i++;
        continue;
      }
      if (!this.fence && !this.fenceLine && !this.code && text.startsWith("**", i)) {
        if (this.bold) {
          run += "**";
          emit();
          this.bold = false;
        } else {
          emit();
          this.bold = true;
          run += "**";
        }
        i += 2;
        continue;
      }
      run += ch;
      i++;
    }
    emit();
    return out;
  }
}
