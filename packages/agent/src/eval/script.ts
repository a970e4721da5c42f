/**
 * Runs a task's shell script (tests/test.sh, solution/solve.sh, a Dockerfile's RUN) with a timeout: the command (the
 * trial sandbox's bwrap, then bash) in its own process group, so a timeout or a cancel kills everything it started.
 */
import { spawn } from "node:child_process";

/** Output kept for error messages and the trial's record, by default (its start and end, when longer). */
export const OUTPUT_CHARS = 16_000;

/**
 * `text` when it fits in `max` characters, else its first and last halves around a line saying how much was left
 * out: a failure's cause is often early (the first error) and its consequence late.
 */
export function boundedOutput(text: string, max: number): string {
  if (text.length <= max) return text;
  const half = Math.floor(max / 2);
  return `${text.slice(0, half)}\n[… ${text.length - 2 * half} characters left out …]\n${text.slice(-half)}`;
}

export interface ScriptOutcome {
  /** Exit code, or null when killed. */
  code: number | null;
  timedOut: boolean;
  /** Its stdout and stderr, interleaved; its start and end when longer than the bound (see {@link boundedOutput}). */
  output: string;
  /** How long it ran. */
  ms: number;
}

export interface ScriptOptions {
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
  signal?: AbortSignal;
  /**
   * Written to the child's descriptor 3, then closed: bwrap's `--args 3` reads its options there, so that what they
   * hold (the variables set inside the sandbox) is not on its command line, which every local user can read.
   */
  fd3?: Buffer;
  /** The output kept (default {@link OUTPUT_CHARS}). */
  maxOutputChars?: number;
}

/** Runs `argv`; never rejects for the script's own failure (a spawn failure is in the output, code null). */
export function runScript(argv: readonly string[], options: ScriptOptions): Promise<ScriptOutcome> {
  const started = performance.now();
  return new Promise((resolve) => {
    const max = options.maxOutputChars ?? OUTPUT_CHARS;
    // The start is kept as it comes; past it, a window of the end (trimmed now and then, not at every chunk).
    let head = "";
    let tail = "";
    let dropped = 0;
    let timedOut = false;
    const [command = "bash", ...args] = argv;
    const child = spawn(command, args, {
      env: options.env,
      detached: true,
      stdio: ["ignore", "pipe", "pipe", options.fd3 ? "pipe" : "ignore"],
    });
    const fd3 = child.stdio[3];
    if (options.fd3 && fd3 && "end" in fd3) {
      // A child that exits before reading it all (a spawn failure) must not crash the run with EPIPE.
      fd3.on("error", () => {});
      fd3.end(options.fd3);
    }
    const half = Math.floor(max / 2);
    const keep = (chunk: Buffer) => {
      let text = chunk.toString("utf8");
      if (head.length < half) {
        const room = half - head.length;
        head += text.slice(0, room);
        text = text.slice(room);
      }
      tail += text;
      if (tail.length > 2 * half) {
        dropped += tail.length - half;
        tail = tail.slice(-half);
      }
    };
    const output = () => {
      if (dropped === 0) return boundedOutput(head + tail, max);
      const end = tail.slice(-half);
      return `${head}\n[… ${dropped + tail.length - end.length} characters left out …]\n${end}`;
    };
    child.stdout?.on("data", keep);
    child.stderr?.on("data", keep);
    const killGroup = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
      } catch {
        // Already gone.
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, options.timeoutMs);
    const onAbort = () => killGroup();
    options.signal?.addEventListener("abort", onAbort, { once: true });
    child.on("error", (error) => {
      tail += `\n${error.message}`;
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      // Whatever the script left running in its group goes with it.
      killGroup();
      resolve({ code, timedOut, output: output(), ms: performance.now() - started });
    });
  });
}
