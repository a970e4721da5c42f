/**
 * Keyboard input of `crow run`. On a TTY: REPL lines through readline (history, line editing), and raw-mode keys
 * while a turn runs — Ctrl-C arrives as a key there, not a signal, permission questions take one key press, and a
 * line typed meanwhile steers the turn (Enter) or waits for the next one (Tab).
 * Without a TTY: REPL lines are read from stdin one by one; there are no keys (Ctrl-C is a real SIGINT, handled by
 * the client).
 */
import { createInterface } from "node:readline";

export type LineResult = { kind: "line"; text: string } | { kind: "eof" } | { kind: "interrupt" };

/** The subset of process.stdin used here (a PTY in tests is still process.stdin of the child). */
export interface KeyboardInput extends NodeJS.ReadableStream {
  isTTY?: boolean;
  setRawMode?(mode: boolean): unknown;
}

const CTRL_C = "\x03";
const CTRL_D = "\x04";

export class Keyboard {
  private readonly history: string[] = [];
  private lines: AsyncIterator<string> | undefined;
  private readonly handlers: Array<(key: string) => void> = [];
  private readonly onData = (data: Buffer | string) => {
    const key = typeof data === "string" ? data : data.toString("utf8");
    this.handlers[this.handlers.length - 1]?.(key);
  };

  constructor(
    private readonly input: KeyboardInput,
    private readonly output: NodeJS.WritableStream,
  ) {}

  get isTTY(): boolean {
    return this.input.isTTY === true && typeof this.input.setRawMode === "function";
  }

  /** Reads one REPL line. Ctrl-C on an empty line is `interrupt` (on a non-empty one it clears the line); Ctrl-D is `eof`. */
  readLine(prompt: string): Promise<LineResult> {
    if (!this.isTTY) return this.readPipedLine();
    return new Promise((resolve) => {
      const rl = createInterface({
        input: this.input,
        output: this.output,
        terminal: true,
        history: [...this.history],
        historySize: 500,
        removeHistoryDuplicates: true,
        prompt,
      });
      let settled = false;
      const finish = (result: LineResult) => {
        if (settled) return;
        settled = true;
        rl.close();
        resolve(result);
      };
      rl.on("line", (line) => {
        if (line.trim()) this.history.unshift(line);
        finish({ kind: "line", text: line });
      });
      rl.on("SIGINT", () => {
        if (rl.line) {
          // Ctrl-C with text typed: drop the line and ask again, as shells do.
          this.output.write("^C\n");
          rl.write(null, { ctrl: true, name: "e" });
          rl.write(null, { ctrl: true, name: "u" });
          rl.prompt();
          return;
        }
        this.output.write("\n");
        finish({ kind: "interrupt" });
      });
      rl.on("close", () => {
        // Ctrl-D leaves the cursor after the prompt.
        if (!settled) this.output.write("\n");
        finish({ kind: "eof" });
      });
      rl.prompt();
    });
  }

  private async readPipedLine(): Promise<LineResult> {
    this.lines ??= createInterface({ input: this.input, terminal: false })[Symbol.asyncIterator]();
    const next = await this.lines.next();
    return next.done ? { kind: "eof" } : { kind: "line", text: next.value };
  }

  /** While a turn runs (TTY only): Ctrl-C calls `onInterrupt`; other keys are ignored. Returns the stop function. */
  watchInterrupts(onInterrupt: () => void): () => void {
    if (!this.isTTY) return () => {};
    return this.raw((key) => {
      if (key.includes(CTRL_C)) onInterrupt();
    });
  }

  /**
   * While a turn runs (TTY only): Ctrl-C calls `interrupt`; what is typed is a line (echoed through `echo`,
   * Backspace erases) that Enter hands to `line` as a steer and Tab as a prompt to queue. Returns the stop function.
   */
  watchTurn(
    on: { interrupt: () => void; line: (text: string, how: "steer" | "queue") => void },
    echo: (text: string) => void,
  ): () => void {
    if (!this.isTTY) return () => {};
    let line = "";
    return this.raw((key) => {
      // Arrow keys and other escape sequences: no line editing here.
      if (key.startsWith("\x1b")) return;
      for (const char of key) {
        if (char === CTRL_C) {
          line = "";
          on.interrupt();
          return;
        }
        if (char === "\r" || char === "\n" || char === "\t") {
          const text = line.trim();
          if (line) echo("\n");
          line = "";
          if (text) on.line(text, char === "\t" ? "queue" : "steer");
        } else if (char === "\x7f" || char === "\b") {
          if (line.length > 0) echo("\b \b");
          line = [...line].slice(0, -1).join("");
        } else if (char >= " ") {
          line += char;
          echo(char);
        }
      }
    });
  }

  /**
   * Waits for one of the keys (TTY only). Resolves with the chosen value, `interrupt` on Ctrl-C, or `aborted` when
   * the signal fires (the agent withdrew the question).
   */
  choose<T>(
    choices: ReadonlyArray<{ keys: readonly string[]; value: T }>,
    signal?: AbortSignal,
  ): Promise<T | "interrupt" | "aborted"> {
    return new Promise((resolve) => {
      let stop = () => {};
      const done = (value: T | "interrupt" | "aborted") => {
        stop();
        signal?.removeEventListener("abort", onAbort);
        resolve(value);
      };
      const onAbort = () => done("aborted");
      if (signal?.aborted) {
        resolve("aborted");
        return;
      }
      signal?.addEventListener("abort", onAbort, { once: true });
      stop = this.raw((key) => {
        if (key.includes(CTRL_C)) return done("interrupt");
        const found = choices.find((c) => c.keys.includes(key));
        if (found) done(found.value);
      });
    });
  }

  /**
   * Reads one answer line in raw mode (TTY only), while a turn runs: typed characters are echoed through `echo`,
   * Backspace erases, Enter ends the line. Ctrl-C is `interrupt`, Ctrl-D on an empty line is `eof`, and the signal
   * firing (the question was withdrawn) ends it as `aborted`.
   */
  readAnswer(echo: (text: string) => void, signal?: AbortSignal): Promise<LineResult | { kind: "aborted" }> {
    return new Promise((resolve) => {
      let line = "";
      let stop = () => {};
      const done = (result: LineResult | { kind: "aborted" }) => {
        stop();
        signal?.removeEventListener("abort", onAbort);
        resolve(result);
      };
      const onAbort = () => done({ kind: "aborted" });
      if (signal?.aborted) return resolve({ kind: "aborted" });
      signal?.addEventListener("abort", onAbort, { once: true });
      stop = this.raw((key) => {
        // Arrow keys and other escape sequences: no line editing here.
        if (key.startsWith("\x1b")) return;
        for (const char of key) {
          if (char === CTRL_C) return done({ kind: "interrupt" });
          if (char === CTRL_D && line === "") return done({ kind: "eof" });
          if (char === "\r" || char === "\n") {
            echo("\n");
            return done({ kind: "line", text: line });
          }
          if (char === "\x7f" || char === "\b") {
            if (line.length > 0) echo("\b \b");
            line = [...line].slice(0, -1).join("");
          } else if (char >= " ") {
            line += char;
            echo(char);
          }
        }
      });
    });
  }

  /** Pushes a raw-mode key handler (the newest one gets the keys); returns its removal. */
  private raw(handler: (key: string) => void): () => void {
    this.handlers.push(handler);
    if (this.handlers.length === 1) {
      this.input.setRawMode?.(true);
      this.input.on("data", this.onData);
      this.input.resume();
    }
    let removed = false;
    return () => {
      if (removed) return;
      removed = true;
      this.handlers.splice(this.handlers.indexOf(handler), 1);
      if (this.handlers.length === 0) {
        this.input.off("data", this.onData);
        this.input.setRawMode?.(false);
        this.input.pause();
      }
    };
  }
}
