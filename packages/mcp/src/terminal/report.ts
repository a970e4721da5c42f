/**
 * What a terminal call tells the model about its command, built from the shell's state (session.ts holds the rules
 * of a call and does the waiting): the result of a wait, from how it ended and what was printed (the output, what
 * happened, what the model can do next, the footer, the call's status); the output nobody has seen yet; the refusal
 * of a new command while one still runs.
 */
import { explainBlocked } from "../sandbox/explain.js";
import { type CallStatus, exitNote, footer, joinParts, NO_OUTPUT, SOFT_TIMEOUT_GUIDANCE, seconds } from "./format.js";
import type { Shell } from "./shell.js";
import type { WaitEnd } from "./wait.js";

/** What the call returns to the model. */
export interface TerminalResponse {
  text: string;
  isError?: boolean;
  status?: CallStatus;
  exitCode?: number;
  cwd: string;
  /** The output shows the sandbox blocked the command (a write outside the writable roots, the network). */
  sandboxBlocked?: boolean;
}

/**
 * How a call waits: for a command it ran or keeps waiting for (until the soft timeout, or the hard one), or
 * briefly after sending input or a key to a running program.
 */
export type WaitMode = "command" | "interactive";

/** How a call's wait ended, once a hard timeout's interruption (if any) is over, and what it saw. */
export interface WaitOutcome {
  end: WaitEnd;
  mode: WaitMode;
  /** Output that came before the call's own (what a program printed before it was sent input or a key). */
  before?: string;
  /** What the command printed during the wait, without the echo of typed input. */
  output: string;
  /** What a hard timeout did to the command. */
  timeoutNote?: string;
  /** How long the call waited. */
  waitedMs: number;
  /** The session's soft timeout (named when a command went quiet). */
  softTimeoutMs: number;
  /** Where a new shell starts (named when the shell exited). */
  startCwd: string;
}

/**
 * The result of a call whose wait ended as `outcome` says, in `shell`: the shell exited, the command completed
 * (the shell's finished status is consumed; a sandbox refusal seen in the output is explained), or it is still
 * running (with what the model can do next).
 */
export function reportWait(shell: Shell, outcome: WaitOutcome): TerminalResponse {
  const { end, mode, output, timeoutNote } = outcome;
  const head = joinParts(outcome.before, output);
  if (end === "exited") {
    return {
      text: joinParts(head, timeoutNote, exitNote(shell.shellExitCode, outcome.startCwd)),
      status: "exited",
      exitCode: shell.shellExitCode,
      cwd: outcome.startCwd,
    };
  }
  if (end === "done") {
    const exitCode = shell.finished?.exitCode ?? -1;
    shell.finished = undefined;
    // Noted even when the command as a whole succeeded (`cp x /etc || true`); offered to re-run only when it failed.
    const blocked = explainBlocked(output, shell.policy);
    return {
      text:
        joinParts(head, timeoutNote, blocked, footer("completed", shell.cwd, exitCode, outcome.startCwd)) || NO_OUTPUT,
      status: "completed",
      exitCode,
      cwd: shell.cwd,
      ...(blocked && exitCode !== 0 ? { sandboxBlocked: true } : {}),
    };
  }
  const guidance =
    end === "aborted"
      ? "[Request cancelled; sent C-c to the command.]"
      : end === "input"
        ? '[The command is waiting for input. Send it with is_input=true (it is followed by Enter), or send "C-c" to interrupt or "C-d" to end the input.]'
        : SOFT_TIMEOUT_GUIDANCE;
  const waited =
    mode === "interactive" || end === "aborted" || end === "hard" || end === "input"
      ? undefined
      : end === "ceiling"
        ? `[No result after ${seconds(outcome.waitedMs)} (the command keeps printing).]`
        : `[No new output for ${seconds(outcome.softTimeoutMs)}.]`;
  return {
    text: joinParts(head || "(no new output)", timeoutNote, waited, guidance, footer("running", shell.cwd)),
    status: "running",
    cwd: shell.cwd,
  };
}

/** Output nobody has seen: the rest of a command that finished after its call returned, or background output. */
export function unreported(shell: Shell): string | undefined {
  const output = shell.take().text;
  const finished = shell.finished;
  shell.finished = undefined;
  if (finished) {
    return joinParts(
      `[The previous command finished with exit code ${finished.exitCode} after its last result; output not shown before:]`,
      output,
      "[End of the previous command's output]",
    );
  }
  return output.trim() ? joinParts("[Output printed by background jobs since the last command:]", output) : undefined;
}

/** Why a new command was not run while the previous one still runs in `shell`, and how to go on. */
export function stillRunningText(shell: Shell): string {
  const first = shell.command.split("\n")[0] ?? "";
  const shown = first.length > 200 ? `${first.slice(0, 200)}…` : first;
  return joinParts(
    "Error: the previous command is still running, so this command was NOT run.",
    `Previous command: ${shown}${shell.command.includes("\n") ? " …" : ""}`,
    "Send '' to keep waiting for it (you get the output it printed since, nothing is lost), is_input=true to send it input, \"C-c\" to interrupt it, or reset=true to kill it and restart the shell (losing cwd and environment). Then run your command.",
    footer("running", shell.cwd),
  );
}
