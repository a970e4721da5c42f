/**
 * Input piped into `crow run` beside a prompt argument (`git diff | crow run "review this"`): read to its end and
 * sent after the prompt as one delimited block, as `claude -p` and `codex exec` do. The block is capped so a huge
 * pipe cannot fill the model's context; what was left out is said in the block (for the model) and in a notice (for
 * the user).
 */
import { fstatSync } from "node:fs";

/** The most of the piped input sent to the model (UTF-8 bytes); about 64 000 tokens of code or a diff. */
export const PIPED_INPUT_CAP = 256 * 1024;

/**
 * How long `crow run` waits for a first byte on a stdin that is neither a terminal nor a shell pipe or file (a
 * socket an IDE or a script left open and never writes to): after that it goes on without it rather than hang.
 */
export const QUIET_STDIN_MS = 3000;

export interface PipedInput {
  /** The input as sent (at most {@link PIPED_INPUT_CAP} bytes, cut at a character boundary). */
  text: string;
  /** Bytes that arrived in all. */
  bytes: number;
  /** Nothing arrived and the stream stayed open for {@link QUIET_STDIN_MS}: the run went on without it. */
  quiet: boolean;
}

/**
 * Whether stdin (fd 0) is a shell pipe or a redirected file: then its writer decides when it ends, however long a
 * slow command (`make 2>&1 | crow run …`) takes before its first line, and the run waits for it.
 */
function isShellPipeOrFile(): boolean {
  try {
    const stat = fstatSync(0);
    return stat.isFIFO() || stat.isFile();
  } catch {
    return false;
  }
}

/**
 * Reads `stream` to its end, keeping the first {@link PIPED_INPUT_CAP} bytes and counting the rest (drained, so
 * the writer is not cut off with SIGPIPE). A stream other than a shell pipe or a file that stays silent for
 * {@link QUIET_STDIN_MS} is given up on (`quiet`).
 */
export async function readPipedInput(
  stream: NodeJS.ReadableStream,
  /** Called once when a shell pipe has given nothing for {@link QUIET_STDIN_MS} (the run goes on waiting). */
  onWaiting?: () => void,
): Promise<PipedInput> {
  const kept: Buffer[] = [];
  let keptBytes = 0;
  let bytes = 0;
  const done = new Promise<boolean>((resolve) => {
    stream.on("data", (chunk: Buffer | string) => {
      const buffer = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
      bytes += buffer.length;
      if (keptBytes < PIPED_INPUT_CAP) {
        const part = buffer.subarray(0, PIPED_INPUT_CAP - keptBytes);
        kept.push(part);
        keptBytes += part.length;
      }
    });
    stream.once("end", () => resolve(false));
    // A stdin that cannot be read (closed, a directory) is no input: the prompt goes alone.
    stream.once("error", () => resolve(false));
  });
  let quiet = false;
  if (isShellPipeOrFile()) {
    // A slow writer (`make 2>&1 | crow run …`) is waited for; a pipe nobody writes to is said, so no run hangs mute.
    const waiting = setTimeout(() => {
      if (bytes === 0) onWaiting?.();
    }, QUIET_STDIN_MS);
    await done;
    clearTimeout(waiting);
  } else {
    let timer: NodeJS.Timeout | undefined;
    const silent = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(bytes === 0), QUIET_STDIN_MS);
    });
    quiet = await Promise.race([done, silent]);
    clearTimeout(timer);
    // A first byte came: the writer is there, its end is waited for however long it takes.
    if (quiet) (stream as { destroy?: () => void }).destroy?.();
    else await done;
  }
  // A TextDecoder without `stream` drops a character cut in half at the cap (it becomes U+FFFD, then trimmed).
  const text = new TextDecoder().decode(Buffer.concat(kept)).replace(/\uFFFD$/, "");
  return { text, bytes, quiet };
}

/** The block sent to the model after the prompt, with the cut said where it happened. */
export function pipedBlock(input: PipedInput): string {
  const cut =
    input.bytes > PIPED_INPUT_CAP
      ? `\n[the input was ${sizeText(input.bytes)}: only its first ${sizeText(PIPED_INPUT_CAP)} are above]`
      : "";
  const body = input.text.endsWith("\n") ? input.text : `${input.text}\n`;
  return `The input piped to this command on stdin:\n<stdin>\n${body}</stdin>${cut}`;
}

/** What the user is told while a shell pipe beside the prompt has given nothing yet. */
export const WAITING_NOTICE = `waiting for the input piped on stdin (nothing in ${QUIET_STDIN_MS / 1000} s yet); if there is none, run with </dev/null`;

/** What the user is told about the piped input, if anything (a cut or a silent stdin given up on). */
export function pipedNotice(input: PipedInput): string | undefined {
  if (input.quiet) {
    return `nothing arrived on stdin in ${QUIET_STDIN_MS / 1000} s: running the prompt without it (pipe the input in, or redirect </dev/null to skip the wait)`;
  }
  if (input.bytes > PIPED_INPUT_CAP) {
    return `stdin: ${sizeText(input.bytes)} piped, the first ${sizeText(PIPED_INPUT_CAP)} sent to the model`;
  }
  return undefined;
}

function sizeText(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}
