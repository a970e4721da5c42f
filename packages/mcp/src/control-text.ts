/**
 * Text someone else wrote (a model's answer, a tool call's title) made safe to draw on a terminal: every control
 * sequence and control character removed, every printable character kept (emoji, CJK, combining marks).
 *
 * Removed: CSI (`ESC [` or 8-bit `\x9b` … final byte: cursor moves, screen clears), OSC (`ESC ]`/`\x9d` … ended
 * by BEL or ST: window title, clipboard write (OSC 52), hyperlinks (OSC 8)), DCS/SOS/PM/APC strings (`ESC P`/`X`/
 * `^`/`_` or their 8-bit forms, ended by ST), every other escape (`ESC` + intermediates + final byte, e.g. `ESC c`,
 * a full reset), a lone ESC, C0 controls other than `\n` and `\t` (so `\r` too: it would let text overwrite what is
 * already on the line), DEL and the C1 controls U+0080–U+009F.
 *
 * A string that never gets its terminator ends at the next newline (which is kept): a model that opens an OSC and
 * never closes it loses that line, not the rest of its answer.
 *
 * {@link ControlStripper} is a small state machine that keeps its state between pieces, so a sequence cut between
 * two stream deltas is still removed, and it holds nothing back: memory stays constant whatever the input.
 * Dependency-free: crow's terminal client uses it through `@crow/mcp/control-text`.
 */

enum State {
  Ground,
  /** After ESC. */
  Escape,
  /** After ESC and intermediate bytes (0x20–0x2f). */
  EscapeIntermediate,
  /** Inside a CSI: parameter and intermediate bytes until the final byte. */
  Csi,
  /** Inside an OSC/DCS/SOS/PM/APC string until BEL or ST. */
  ControlString,
  /** After ESC inside a control string: `\` ends it (ST). */
  ControlStringEscape,
}

const ESC = 0x1b;
// Anything that needs work: C0 except \t and \n, DEL, C1. Text without any passes through untouched.
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const NEEDS_WORK = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;

/** Strips control sequences from a stream of text pieces (see the module comment). One instance per stream. */
export class ControlStripper {
  private state = State.Ground;

  /** The visible text of `piece`, given what came before it in this stream. */
  push(piece: string): string {
    if (this.state === State.Ground && !NEEDS_WORK.test(piece)) return piece;
    let out = "";
    // Start of the current run of plain text (copied in one slice, not char by char).
    let run = 0;
    for (let i = 0; i < piece.length; i++) {
      const code = piece.charCodeAt(i);
      if (this.state === State.Ground) {
        if (code >= 0x20 && code !== 0x7f && (code < 0x80 || code > 0x9f)) continue;
        if (code === 0x0a || code === 0x09) continue;
        out += piece.slice(run, i);
        run = i + 1;
        this.ground(code);
        continue;
      }
      // Inside a sequence: nothing of it is shown.
      if (this.inSequence(code)) {
        run = i + 1;
        continue;
      }
      // The sequence ended without consuming this character: it is text (or starts something) as in ground.
      run = i;
      i--;
    }
    return out + piece.slice(run);
  }

  /** Forgets an unfinished sequence (the stream ended; what comes next starts fresh). */
  reset(): void {
    this.state = State.Ground;
  }

  /** A control character met in ground state: starts a sequence or is dropped. */
  private ground(code: number): void {
    if (code === ESC) this.state = State.Escape;
    else if (code === 0x9b) this.state = State.Csi;
    else if (code === 0x90 || code === 0x98 || code === 0x9d || code === 0x9e || code === 0x9f)
      this.state = State.ControlString;
  }

  /** Feeds one character to the sequence in progress; false when the character is not part of it. */
  private inSequence(code: number): boolean {
    switch (this.state) {
      case State.Escape:
        if (code === 0x5b) this.state = State.Csi;
        else if (code === 0x5d || code === 0x50 || code === 0x58 || code === 0x5e || code === 0x5f)
          this.state = State.ControlString;
        else if (code >= 0x20 && code <= 0x2f) this.state = State.EscapeIntermediate;
        else if (code >= 0x30 && code <= 0x7e) this.state = State.Ground;
        else if (code !== ESC) return this.endSequence();
        return true;
      case State.EscapeIntermediate:
        if (code >= 0x20 && code <= 0x2f) return true;
        if (code >= 0x30 && code <= 0x7e) {
          this.state = State.Ground;
          return true;
        }
        return this.endSequence();
      case State.Csi:
        if (code >= 0x20 && code <= 0x3f) return true;
        if (code >= 0x40 && code <= 0x7e) {
          this.state = State.Ground;
          return true;
        }
        return this.endSequence();
      case State.ControlString:
        if (code === 0x07 || code === 0x9c) this.state = State.Ground;
        else if (code === ESC) this.state = State.ControlStringEscape;
        else if (code === 0x0a) return this.endSequence();
        return true;
      case State.ControlStringEscape:
        if (code === 0x5c) {
          this.state = State.Ground;
          return true;
        }
        // ESC inside a string, not ST: the string ended there and that ESC starts a new escape.
        this.state = State.Escape;
        return this.inSequence(code);
      default:
        return false;
    }
  }

  private endSequence(): false {
    this.state = State.Ground;
    return false;
  }
}

/** `text` without control sequences or control characters other than `\n` and `\t` (see the module comment). */
export function stripControls(text: string): string {
  if (!NEEDS_WORK.test(text)) return text;
  return new ControlStripper().push(text);
}
