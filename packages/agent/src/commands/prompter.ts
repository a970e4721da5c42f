/**
 * Line prompts for `crow init` over node:readline/promises, in a terminal or from piped stdin alike. Lines are read
 * through one async iterator created up front, so piped answers that arrive before their question are queued rather
 * than lost. Secret answers are not echoed: the interface writes through a stream that is muted while one is typed.
 */
import { createInterface } from "node:readline/promises";
import { Writable } from "node:stream";

/** The user ended the input (Ctrl-D, end of piped stdin) or pressed Ctrl-C. */
export class PromptAborted extends Error {
  constructor(readonly interrupted: boolean) {
    super(interrupted ? "interrupted" : "input ended");
  }
}

export interface AskOptions {
  /** Returned for an empty answer; shown as `[default]`. */
  default?: string;
  /** Not echoed (API keys, passwords). */
  secret?: boolean;
}

export interface Prompter {
  ask(question: string, options?: AskOptions): Promise<string>;
  /** Asks until the answer is y/yes or n/no (empty: `fallback`). */
  confirm(question: string, fallback: boolean): Promise<boolean>;
  /** Prints a line. */
  say(text: string): void;
  close(): void;
}

export function createPrompter(
  input: NodeJS.ReadableStream & { isTTY?: boolean } = process.stdin,
  output: NodeJS.WritableStream & { columns?: number } = process.stdout,
): Prompter {
  let muted = false;
  const terminal = input.isTTY === true;
  const sink = new Writable({
    write(chunk, _encoding, done) {
      if (!muted) output.write(chunk);
      done();
    },
  });
  // readline lays out long lines by the terminal's width.
  Object.defineProperty(sink, "columns", { get: () => output.columns ?? 80 });
  const rl = createInterface({ input, output: sink, terminal });
  const lines = rl[Symbol.asyncIterator]();
  let interrupt: ((error: PromptAborted) => void) | undefined;
  rl.on("SIGINT", () => {
    muted = false;
    output.write("\n");
    interrupt?.(new PromptAborted(true));
  });

  async function ask(question: string, options: AskOptions = {}): Promise<string> {
    const shown = options.default ? `${question} [${options.default}]: ` : `${question}: `;
    rl.setPrompt(shown);
    rl.prompt();
    muted = options.secret === true;
    try {
      const next = await new Promise<IteratorResult<string>>((resolve, reject) => {
        interrupt = reject;
        lines.next().then(resolve, reject);
      });
      if (next.done) throw new PromptAborted(false);
      const answer = next.value.trim();
      return answer === "" ? (options.default ?? "") : answer;
    } finally {
      interrupt = undefined;
      if (muted) {
        muted = false;
        // The user's Enter was swallowed with the rest of the secret.
        if (terminal) output.write("\n");
      }
    }
  }

  return {
    ask,
    async confirm(question, fallback) {
      for (;;) {
        const answer = (await ask(`${question} ${fallback ? "[Y/n]" : "[y/N]"}`)).toLowerCase();
        if (answer === "") return fallback;
        if (answer === "y" || answer === "yes") return true;
        if (answer === "n" || answer === "no") return false;
        output.write("Please answer y or n.\n");
      }
    },
    say(text) {
      output.write(`${text}\n`);
    },
    close() {
      rl.close();
    },
  };
}
