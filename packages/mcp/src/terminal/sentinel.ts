import { randomBytes } from "node:crypto";

/**
 * Completion detection for the terminal's bash.
 *
 * The shell announces two things in its output stream, each as a marker framed by the unit-separator byte 0x1F:
 * - `\x1fCROW:B:<nonce>\x1f` (from PS0) right before it executes a command line it has read: everything before it
 *   (the echo of the line we typed) is not the command's output;
 * - `\x1fCROW:E:<nonce>:<exit code>:<cwd>\x1f` (from PROMPT_COMMAND) when it is back at the prompt: the command is done.
 *
 * The nonce is random per shell and lives only in unexported shell variables, so child processes never see it and a
 * program that prints marker-looking text (a log of another session, a nested crow, a test fixture) cannot complete a
 * command: without the right nonce a marker is just text.
 */

const SEP = "\x1f";
/** Longest marker we wait for before treating a lone 0x1F as plain text (the cwd is the long part). */
const MAX_MARKER_LENGTH = 8192;

/** A fresh secret for one shell. */
export function createNonce(): string {
  return randomBytes(16).toString("hex");
}

/** Quotes `value` for bash as one word. */
export function shellQuote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

/**
 * The line typed into a fresh `bash --norc --noprofile --noediting -i` to configure it: an empty fixed prompt (PS1 is
 * reset before every prompt, so e.g. a venv's "(venv) " prefix does not leak into outputs), PS2 empty, the two
 * markers, no history (no `!` expansion surprises, no memory growth). PROMPT_COMMAND saves `$?` first; bash restores
 * `$?` after PROMPT_COMMAND, and `__crow_st` puts it back after the command file is read, so `false` then
 * `echo $?` still prints 1 in the next call.
 */
export function setupLine(nonce: string): string {
  const prompt = `__crow_rc=$?; PS1=''; PS2=''; printf '\\037CROW:E:%s:%s:%s\\037' "$__crow_n" "$__crow_rc" "$PWD"`;
  return [
    `__crow_n=${nonce}`,
    "PS1=''",
    "PS2=''",
    `PS0='\\037CROW:B:\${__crow_n}\\037'`,
    `PROMPT_COMMAND=${shellQuote(prompt)}`,
    // Restores $? for the next command: reading the command file would otherwise reset it (see Shell.send).
    '__crow_st() { return "$1"; }',
    // The kernel's LF→CRLF output translation is its slow path: with it a PTY carries ~4 MB/s, without it ~90 MB/s.
    // Nothing here renders the output, so newlines stay LF (the cleaner accepts both).
    "stty -onlcr 2>/dev/null",
    "set +o history +H",
    "unset HISTFILE",
    "export -n __crow_n PROMPT_COMMAND PS0 PS1 PS2",
  ].join("; ");
}

/** What the scanner found in the stream, in order. */
export type MarkerEvent =
  | { type: "text"; text: string }
  | { type: "begin" }
  | { type: "end"; exitCode: number; cwd: string };

/**
 * Splits the shell's output stream into text and markers as it arrives. Markers may be cut across chunks; a partial
 * marker is held back until it completes (or grows too long to be one, in which case it is text). Markers with a
 * wrong nonce, or malformed, are passed through as text.
 */
export class MarkerScanner {
  private carry = "";
  private readonly begin: string;
  private readonly endPrefix: string;

  constructor(nonce: string) {
    this.begin = `CROW:B:${nonce}`;
    this.endPrefix = `CROW:E:${nonce}:`;
  }

  /** Feeds one chunk; returns the events it completes. */
  feed(chunk: string): MarkerEvent[] {
    const buf = this.carry ? this.carry + chunk : chunk;
    this.carry = "";
    const events: MarkerEvent[] = [];
    const text = (s: string) => {
      if (s) events.push({ type: "text", text: s });
    };
    let pos = 0;
    while (pos < buf.length) {
      const start = buf.indexOf(SEP, pos);
      if (start < 0) {
        text(buf.slice(pos));
        break;
      }
      text(buf.slice(pos, start));
      const stop = buf.indexOf(SEP, start + 1);
      if (stop < 0) {
        if (buf.length - start <= MAX_MARKER_LENGTH) {
          this.carry = buf.slice(start);
        } else {
          text(buf.slice(start));
        }
        break;
      }
      const inner = buf.slice(start + 1, stop);
      const event = this.parse(inner);
      if (event) {
        events.push(event);
        pos = stop + 1;
      } else {
        // Not ours: keep it as text, and look again from the closing 0x1F, which may open a real marker.
        text(buf.slice(start, stop));
        pos = stop;
      }
    }
    return mergeText(events);
  }

  /** Returns (and forgets) a held-back partial marker, e.g. when the shell has exited. */
  flush(): string {
    const rest = this.carry;
    this.carry = "";
    return rest;
  }

  private parse(inner: string): MarkerEvent | undefined {
    if (inner === this.begin) return { type: "begin" };
    if (!inner.startsWith(this.endPrefix)) return undefined;
    const rest = inner.slice(this.endPrefix.length);
    const colon = rest.indexOf(":");
    if (colon < 1) return undefined;
    const code = rest.slice(0, colon);
    if (!/^\d{1,3}$/.test(code)) return undefined;
    return { type: "end", exitCode: Number(code), cwd: rest.slice(colon + 1) };
  }
}

function mergeText(events: MarkerEvent[]): MarkerEvent[] {
  const merged: MarkerEvent[] = [];
  for (const event of events) {
    const last = merged[merged.length - 1];
    if (event.type === "text" && last?.type === "text") last.text += event.text;
    else merged.push(event);
  }
  return merged;
}
