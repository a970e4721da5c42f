/**
 * Runs a task's shell script (tests/test.sh, solution/solve.sh) in the trial workspace with a timeout: bash in its
 * own process group, so a timeout or a cancel kills everything the script started, not just bash.
 */
import { spawn } from "node:child_process";

/** Output kept for error messages (the end of stdout+stderr). */
const OUTPUT_TAIL_CHARS = 4000;

export interface ScriptOutcome {
  /** Exit code, or null when killed. */
  code: number | null;
  timedOut: boolean;
  /** The last few thousand characters of its stdout and stderr, interleaved. */
  output: string;
}

export interface ScriptOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
  signal?: AbortSignal;
}

/** Runs `bash file`; never rejects for the script's own failure (a spawn failure is exit code 127's message). */
export function runScript(file: string, options: ScriptOptions): Promise<ScriptOutcome> {
  return new Promise((resolve) => {
    let output = "";
    let timedOut = false;
    const child = spawn("bash", [file], {
      cwd: options.cwd,
      env: options.env,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
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
      resolve({ code, timedOut, output });
    });
  });
}
