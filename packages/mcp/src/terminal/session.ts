import { errorText } from "../error-text.js";
import { log } from "../log.js";
import { describePolicy, type SandboxPolicy, samePolicy, UNCONFINED } from "../sandbox/policy.js";
import { exitNote, footer, footerCwd, joinParts, NO_OUTPUT, seconds } from "./format.js";
import { foregroundProcessGroup, sendSignal, waitingForTerminalInput } from "./procs.js";
import { reportWait, stillRunningText, type TerminalResponse, unreported, type WaitMode } from "./report.js";
import { Shell } from "./shell.js";
import { type WaitEnd, waitFor } from "./wait.js";

export type { TerminalResponse } from "./report.js";

/** One terminal call, as the tool received it. */
export interface TerminalRequest {
  command: string;
  isInput?: boolean;
  /** Hard timeout in seconds: interrupt (then kill) the command if it is still running then. */
  timeoutSeconds?: number;
  reset?: boolean;
  /** Aborted when the client cancels the request: sends C-c. */
  signal?: AbortSignal;
  /** Receives cleaned output as it arrives while the call waits (progress notifications). */
  onOutput?: (text: string) => void;
}

export interface TerminalSessionOptions {
  /** Where new shells start. */
  cwd: string;
  /** No new output for this long → return partial output (default 30 s). */
  softTimeoutMs?: number;
  /** After SIGINT on a hard timeout, how long before SIGKILL (default 2 s). */
  killGraceMs?: number;
  /**
   * The sandbox policy the next shell starts under, read at every command (default: unconfined). When it changed
   * since the running shell started (the session's mode changed), the shell is restarted under the new one.
   */
  policy?: () => SandboxPolicy;
}

const SPECIAL_KEYS: Record<string, string> = { "C-c": "\x03", "C-z": "\x1a", "C-d": "\x04" };
/** After input or a key, a program that printed a partial line (a prompt) is probably waiting: return sooner. */
const INTERACTIVE_PROMPT_QUIET_MS = 250;
const INTERACTIVE_QUIET_MS = 1000;
/** A continuously printing command returns "still running" after this many soft timeouts. */
const CEILING_FACTOR = 4;
/** After a cancellation's C-c, how long a new command waits for the interrupted one to finish. */
const AFTER_INTERRUPT_WAIT_MS = 2000;

/**
 * The terminal of one MCP connection: one persistent bash (started lazily, restarted after `exit` or `reset`),
 * and the rules of a call: run a command and wait for it, keep waiting (`""`), send input or a key, time out.
 * Calls are serialised; output is never lost between calls, only capped.
 */
export class TerminalSession {
  private shell: Shell | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;
  private interruptedAt = 0;
  /** A shell existed and died (exit, timeout kill): the next one announces that state was lost. */
  private shellLost = false;
  private readonly softTimeoutMs: number;
  private readonly killGraceMs: number;

  constructor(private readonly options: TerminalSessionOptions) {
    this.softTimeoutMs = options.softTimeoutMs ?? 30_000;
    this.killGraceMs = options.killGraceMs ?? 2000;
  }

  /** The working directory the next command runs in. */
  get currentCwd(): string {
    return this.cwd;
  }

  /** Process id of the current shell, if one is running (tests and diagnostics). */
  get shellPid(): number | undefined {
    return this.shell?.pid;
  }

  /** Handles one call. Calls run one at a time, in arrival order. */
  run(request: TerminalRequest): Promise<TerminalResponse> {
    const result = this.queue.then(() => this.handle(request));
    this.queue = result.catch(() => undefined);
    return result;
  }

  /** Kills the shell and everything it started. Synchronous and idempotent; later calls fail. */
  close(): void {
    this.closed = true;
    this.shell?.kill();
    this.shell = undefined;
  }

  private get cwd(): string {
    return this.shell?.cwd ?? this.options.cwd;
  }

  private error(text: string): TerminalResponse {
    return { text, isError: true, cwd: this.cwd };
  }

  private async handle(request: TerminalRequest): Promise<TerminalResponse> {
    if (this.closed) return this.error("Error: the terminal is closed.");
    const { command, isInput = false, reset = false } = request;
    if (reset && isInput) return this.error("Error: Cannot use reset=true with is_input=true.");
    if (reset) {
      this.shell?.kill();
      this.shell = undefined;
      this.shellLost = false;
      if (command.trim() === "") {
        return {
          text: joinParts("Terminal reset successfully. All previous state lost.", footerCwd(this.options.cwd)),
          cwd: this.options.cwd,
        };
      }
    }

    const trimmed = command.trim();
    const key = /^C-.$/i.test(trimmed) ? `C-${trimmed.slice(2).toLowerCase()}` : undefined;
    if (key !== undefined && !(key in SPECIAL_KEYS)) {
      return this.error(`Error: Unknown special key: ${trimmed}. Supported keys: C-c, C-z, C-d.`);
    }

    // A shell that exited between calls (e.g. `sleep 1; exit` after a soft timeout) is reported once, then dropped.
    let earlier: string | undefined;
    if (this.shell?.state === "exited") {
      earlier = this.exitReport(this.shell);
      this.shell = undefined;
      this.shellLost = true;
      if (key !== undefined || isInput || trimmed === "") return { text: earlier, status: "exited", cwd: this.cwd };
    }

    const shell = this.shell;
    if (shell?.state === "running") {
      if (key !== undefined) return this.sendKey(shell, key, request);
      if (isInput) return this.sendInput(shell, command, request);
      if (trimmed === "") return this.waitAndReport(shell, request, "command");
      if (Date.now() - this.interruptedAt < AFTER_INTERRUPT_WAIT_MS) {
        await waitFor(shell, { untilMs: this.interruptedAt + AFTER_INTERRUPT_WAIT_MS });
      }
      if (shell.state === "running") return this.error(stillRunningText(shell));
    }

    // The command finished after its call returned: '' gets its remaining output as the result it waited for.
    if (shell?.state === "idle" && shell.finished && trimmed === "" && !isInput && key === undefined) {
      const exitCode = shell.finished.exitCode;
      shell.finished = undefined;
      return {
        text:
          joinParts(earlier, shell.take().text, footer("completed", shell.cwd, exitCode, this.options.cwd)) ||
          NO_OUTPUT,
        status: "completed",
        exitCode,
        cwd: shell.cwd,
      };
    }

    // Nothing is running. Output nobody has seen yet comes first: the end of a command that finished after its call
    // returned, or what background jobs printed since.
    if (shell && shell.state !== "exited") earlier = joinParts(earlier, unreported(shell));
    if (key !== undefined || isInput || trimmed === "") {
      const note =
        key === "C-d"
          ? "No command is running, so C-d was not sent (it would end the shell itself; use reset=true to restart it)."
          : key !== undefined
            ? `No command is running; ${key} was not sent.`
            : isInput
              ? "Error: No command is running, so there is nothing to send input to. To run it as a command, call again with is_input=false."
              : "No command is running.";
      const text = joinParts(earlier, note, footerCwd(this.cwd));
      return isInput ? this.error(text) : { text, cwd: this.cwd };
    }
    return this.runCommand(command, request, earlier);
  }

  private async runCommand(command: string, request: TerminalRequest, earlier?: string): Promise<TerminalResponse> {
    let notice: string | undefined;
    const policy = this.options.policy?.() ?? UNCONFINED;
    if (this.shell && !samePolicy(this.shell.policy, policy)) {
      // A mode change must not leave a shell confined by the old rules (read-only → code would stay read-only,
      // code → read-only would keep writing): the shell restarts, and this result says so.
      this.shell.kill();
      this.shell = undefined;
      this.shellLost = false;
      notice = `[The session's sandbox changed, so a new shell was started in ${this.options.cwd}; the previous shell's working directory, environment variables and background jobs are gone. ${describePolicy(policy)}]`;
    }
    if (!this.shell) {
      try {
        this.shell = await Shell.start(this.options.cwd, policy);
      } catch (error) {
        return this.error(`Error: could not start bash: ${errorText(error)}`);
      }
      if (this.shellLost) {
        this.shellLost = false;
        notice = `[Started a new shell in ${this.options.cwd}. The previous shell's working directory, environment variables and background jobs are gone.]`;
      }
    }
    const shell = this.shell;
    shell.send(command);
    return this.waitAndReport(shell, request, "command", joinParts(earlier, notice));
  }

  private sendKey(shell: Shell, key: string, request: TerminalRequest): Promise<TerminalResponse> {
    const before = shell.take().text;
    const bytes = SPECIAL_KEYS[key] ?? "";
    shell.write(bytes);
    return this.waitAndReport(shell, request, "interactive", before, undefined, key === "C-c" ? bytes : undefined);
  }

  private sendInput(shell: Shell, input: string, request: TerminalRequest): Promise<TerminalResponse> {
    const before = shell.take().text;
    // A terminal's Enter is CR; the line discipline (or a raw-mode program) turns it into what the program expects.
    const normalized = input.replace(/\r\n|\n/g, "\r");
    shell.write(normalized.endsWith("\r") ? normalized : `${normalized}\r`);
    return this.waitAndReport(shell, request, "interactive", before, input);
  }

  /** Waits for the running command per `mode`, handles hard timeouts, and builds the result (report.ts). */
  private async waitAndReport(
    shell: Shell,
    request: TerminalRequest,
    mode: WaitMode,
    before?: string,
    input?: string,
    resendIfIgnored?: string,
  ): Promise<TerminalResponse> {
    const hardMs = request.timeoutSeconds !== undefined ? request.timeoutSeconds * 1000 : undefined;
    const start = Date.now();
    let end = await this.waitForCommand(shell, request, mode, start, hardMs, resendIfIgnored);
    let timeoutNote: string | undefined;
    if (end === "aborted") {
      this.interruptedAt = Date.now();
      shell.write("\x03");
    } else if (end === "hard") {
      ({ end, note: timeoutNote } = await this.interruptForTimeout(shell, hardMs ?? 0));
    }

    let output = shell.take().text;
    if (input !== undefined) output = stripEcho(output, input);
    if (end === "exited") {
      this.shell = undefined;
      this.shellLost = true;
    }
    return reportWait(shell, {
      end,
      mode,
      before,
      output,
      timeoutNote,
      waitedMs: Date.now() - start,
      softTimeoutMs: this.softTimeoutMs,
      startCwd: this.options.cwd,
    });
  }

  /**
   * One wait for the running command, which began at `start`: until it finishes or the shell exits, or until the
   * limits of `mode` (quiet output, waiting for input, the ceiling, the hard timeout `hardMs`) or the request's
   * abort. Its output goes to `request.onOutput` meanwhile. `resendIfIgnored` is the key just sent, pressed once
   * more if nothing reacted to it.
   */
  private async waitForCommand(
    shell: Shell,
    request: TerminalRequest,
    mode: WaitMode,
    start: number,
    hardMs: number | undefined,
    resendIfIgnored: string | undefined,
  ): Promise<WaitEnd> {
    const mark = shell.receivedChars;
    shell.onOutput = request.onOutput;
    const waitOnce = () =>
      waitFor(shell, {
        quietMs:
          mode === "interactive"
            ? () =>
                Math.min(
                  this.softTimeoutMs,
                  shell.endsInPartialLine ? INTERACTIVE_PROMPT_QUIET_MS : INTERACTIVE_QUIET_MS,
                )
            : hardMs === undefined
              ? () => this.softTimeoutMs
              : undefined,
        untilMs: mode === "command" && hardMs === undefined ? start + CEILING_FACTOR * this.softTimeoutMs : undefined,
        hardAtMs: hardMs === undefined ? undefined : start + hardMs,
        probe: () => waitingForTerminalInput(shell.pid),
        signal: request.signal,
      });
    try {
      const end = await waitOnce();
      // A Ctrl-C can be lost: the terminal delivers it to the foreground process group, and in the instant between
      // two commands of a loop that group may already be gone. If nothing reacted (at most the "^C" echo), press
      // it once more, as a person would.
      if (resendIfIgnored && (end === "quiet" || end === "input") && shell.receivedChars - mark <= 4) {
        shell.write(resendIfIgnored);
        return await waitOnce();
      }
      return end;
    } finally {
      shell.onOutput = undefined;
    }
  }

  /**
   * A hard timeout: SIGINT to the terminal's foreground process group (what Ctrl-C does, but also reaching programs
   * that put the terminal in raw mode), then SIGKILL if it has not finished after the grace period. If even that
   * does not bring the prompt back, the whole shell is killed and the next call starts a new one.
   */
  private async interruptForTimeout(shell: Shell, hardMs: number): Promise<{ end: WaitEnd; note: string }> {
    const after = `[Command timed out after ${seconds(hardMs)}`;
    const group = foregroundProcessGroup(shell.pid) ?? shell.pid;
    sendSignal(-group, "SIGINT");
    let end = await waitFor(shell, { untilMs: Date.now() + this.killGraceMs });
    if (end === "done" || end === "exited") return { end, note: `${after}: interrupted it with SIGINT.]` };
    const stubborn = foregroundProcessGroup(shell.pid);
    if (stubborn !== undefined && stubborn !== shell.pid) {
      sendSignal(-stubborn, "SIGKILL");
      end = await waitFor(shell, { untilMs: Date.now() + this.killGraceMs });
      if (end === "done" || end === "exited") {
        return {
          end,
          note: `${after}: it ignored SIGINT for ${seconds(this.killGraceMs)}, so it was killed with SIGKILL.]`,
        };
      }
    }
    log.warn(`terminal: shell ${shell.pid} did not return to its prompt after a timeout; killing it`);
    shell.kill();
    this.shell = undefined;
    return {
      end: "exited",
      note: `${after}: it did not stop after SIGINT and SIGKILL, so the whole shell was killed.]`,
    };
  }

  private exitReport(shell: Shell): string {
    return joinParts(shell.take().text, exitNote(shell.shellExitCode, this.options.cwd));
  }
}

/** Drops the terminal's echo of the input lines we typed from the start of the program's output. */
export function stripEcho(output: string, input: string): string {
  let rest = output;
  for (const line of input.replace(/\r\n?/g, "\n").replace(/\n$/, "").split("\n")) {
    if (line === "" || !rest.startsWith(`${line}\n`)) break;
    rest = rest.slice(line.length + 1);
  }
  return rest;
}
