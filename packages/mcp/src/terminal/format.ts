/**
 * The words of the terminal's results. Footers keep upstream's wording, which models and the agent already know, but
 * only where they tell something: a success is its output alone (as pi's bash does), a failure names its exit code.
 */

/** Upstream's guidance after a soft timeout, plus the is_input option it did not offer. */
export const SOFT_TIMEOUT_GUIDANCE = `The command is still running. You can:
- Send empty command '' to continue waiting
- Send "C-c" to interrupt
- Use a longer timeout parameter
- Send input to it with is_input=true if it is waiting for input
- Next time, run servers and watchers in the background with output to a file: \`cmd > /tmp/cmd.log 2>&1 &\``;

/** How a terminal call ended. */
export type CallStatus =
  /** The command finished; `exitCode` is its status. */
  | "completed"
  /** The command is still running (soft timeout, or an interactive program waiting after input). */
  | "running"
  /** The shell itself exited (e.g. `exit`); the next call starts a new one. */
  | "exited";

/**
 * Footer lines appended to a result that concerns a command: the cwd, then the status. The cwd is left out while it
 * is `startCwd` (where the shell started, the workspace the model was told of), and a command that completed with
 * exit code 0 gets no status line at all: resent with every later request, those lines were most of an `echo`'s
 * result. A result without a status line is therefore a success; a failure always says its code, and a command still
 * running or a shell that exited always says so. A success that printed nothing reads {@link NO_OUTPUT}.
 */
export function footer(status: CallStatus, cwd: string, exitCode?: number, startCwd?: string): string {
  const lines = cwd === startCwd ? [] : [`[Current working directory: ${cwd}]`];
  if (status === "running") lines.push("[Process still running (soft timeout)]");
  else if (status === "exited") lines.push(`[Shell exited with code ${exitCode ?? 0}]`);
  else if (exitCode !== 0) lines.push(`[Command failed with exit code ${exitCode ?? -1}]`);
  return lines.join("\n");
}

/** The whole result of a command that completed, printed nothing and left the cwd where it was. */
export const NO_OUTPUT = "(no output)";

/** Joins non-empty parts with blank-line-free newlines, the way results are assembled. */
export function joinParts(...parts: Array<string | undefined>): string {
  return parts
    .filter((p): p is string => p !== undefined && p.trim() !== "")
    .map((p) => p.replace(/\n+$/, ""))
    .join("\n");
}

/** A duration for messages: "1s", "2.5s". */
export function seconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(2))}s`;
}

/** The footer of a result that ran no command. */
export function footerCwd(cwd: string): string {
  return `[Current working directory: ${cwd}]`;
}

/** What a result says when the shell itself exited. */
export function exitNote(shellExitCode: number | undefined, startCwd: string): string {
  return `[The shell exited with code ${shellExitCode ?? 0}. The next command will start a new shell in ${startCwd}; the working directory, environment variables and background jobs of this one are gone.]`;
}
