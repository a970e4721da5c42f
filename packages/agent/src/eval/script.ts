/**
 * Runs a task's shell script (tests/test.sh, solution/solve.sh, a Dockerfile's RUN) with a timeout: the command (the
 * trial sandbox's bwrap, then bash) in its own process group, so a timeout or a cancel kills everything it started.
 */
import { spawn } from "node:child_process";

/** Output kept for error messages and the trial's record (the end of stdout+stderr). */
export const OUTPUT_TAIL_CHARS = 16_000;

export interface ScriptOutcome {
  /** Exit code, or null when killed. */
  code: number | null;
  timedOut: boolean;
  /** The last few thousand characters of its stdout and stderr, interleaved. */
  output: string;
  /** How long it ran. */
  ms: number;
}

export interface ScriptOptions {
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
  signal?: AbortSignal;
}

/** Runs `argv`; never rejects for the script's own failure (a spawn failure is in the output, code null). */
export function runScript(argv: readonly string[], options: ScriptOptions): Promise<ScriptOutcome> {
  const started = performance.now();
  return new Promise((resolve) => {
    let output = "";
    let timedOut = false;
    const [command = "bash", ...args] = argv;
    const child = spawn(command, args, { env: options.env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString("utf8")).slice(-OUTPUT_TAIL_CHARS);
    };
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
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
      output += `\n${error.message}`;
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      // Whatever the script left running in its group goes with it.
      killGroup();
      resolve({ code, timedOut, output, ms: performance.now() - started });
    });
  });
}
