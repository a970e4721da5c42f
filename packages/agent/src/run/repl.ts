/**
 * The REPL of `crow run -i`: one prompt per line until `/exit`, Ctrl-D, or Ctrl-C pressed twice at an empty prompt
 * (once only says how to quit, so a stray Ctrl-C after a cancelled turn does not end the session).
 */
import type { Keyboard } from "./keyboard.js";
import type { RunOutput } from "./output.js";

/** What `crow run` adds to the agent's `/help`. */
export const REPL_HELP =
  "In crow run: /exit or Ctrl-D quits; Ctrl-C cancels a running turn, twice at an empty prompt quits. While a turn " +
  "runs, type and press Enter to steer it (the model reads it before its next step), or Tab to queue the line as " +
  "the next prompt.";

/** The one-line banner: the model, the directory, how to quit. */
export function replBanner(model: string | undefined, cwd: string): string {
  return `Crow${model ? ` · ${model}` : ""} · ${cwd} · /help for commands, /exit or Ctrl-D to quit`;
}

export interface ReplContext {
  keyboard: Keyboard;
  output: RunOutput;
  /** Styled prompt on a terminal. */
  tty: boolean;
  /** Runs one prompt (the agent answers slash commands too). */
  submitPrompt(text: string): Promise<unknown>;
  /** The next line queued while a turn ran (Tab), if any: run before a new line is read. */
  takeQueued?(): string | undefined;
}

/** Reads and runs prompts; resolves "quit" (/exit, Ctrl-D) or "interrupted" (Ctrl-C twice). */
export async function runRepl(context: ReplContext): Promise<"quit" | "interrupted"> {
  const { keyboard, output } = context;
  let interrupted = false;
  for (;;) {
    const line = await keyboard.readLine(context.tty ? "\x1b[1;32mcrow›\x1b[0m " : "crow> ");
    if (line.kind === "eof") return "quit";
    if (line.kind === "interrupt") {
      if (interrupted) return "interrupted";
      interrupted = true;
      output.notice("Press Ctrl-C again to quit (or type /exit, or Ctrl-D).");
      continue;
    }
    interrupted = false;
    const text = line.text.trim();
    if (!text) continue;
    if (text === "/exit" || text === "/quit") return "quit";
    await context.submitPrompt(line.text);
    if (text === "/help") output.notice(REPL_HELP);
    // Lines queued during the turns (Tab, or a steer that came after the turn ended), each a turn of its own.
    for (let next = context.takeQueued?.(); next !== undefined; next = context.takeQueued?.()) {
      await context.submitPrompt(next);
    }
  }
}
