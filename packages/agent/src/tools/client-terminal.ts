import type { ToolDisplay, ToolProgress, ToolResult } from "@crow/core";
import { errorText } from "@crow/core";
import type { ClientTerminal, CreateTerminalParams } from "./client-types.js";

/** What the editor keeps of a command's output (it drops the beginning beyond this). */
const OUTPUT_BYTE_LIMIT = 256 * 1024;
/** What the model gets of it: the first and last halves of this many characters (crow-mcp's cap). */
const MAX_OUTPUT_CHARS = 30_000;
/** Keys and modes that only make sense with crow-mcp's persistent shell. */
const KEYS = new Set(["C-c", "C-z", "C-d"]);
/** Commands whose whole effect is on the shell itself, lost when the editor's one-shot shell exits. */
const SHELL_STATE = /^\s*(cd|pushd|popd|export|unset|source|\.|alias|set|shopt|ulimit|umask)(\s|$)/;

export interface ClientTerminalContext {
  cwd: string;
  signal: AbortSignal;
  onProgress: (progress: ToolProgress) => void;
  /** Limit when the call gives no `timeout`. */
  defaultTimeoutSeconds: number;
}

function cap(text: string): string {
  if (text.length <= MAX_OUTPUT_CHARS) return text;
  const half = MAX_OUTPUT_CHARS / 2;
  const omitted = text.length - MAX_OUTPUT_CHARS;
  return `${text.slice(0, half)}\n[... ${omitted} characters omitted ...]\n${text.slice(-half)}`;
}

/**
 * crow-mcp's footer wording, so the model reads client and MCP terminal results alike: nothing for a success (the
 * output alone), the exit code of a failure, the signal that ended a command. No working-directory line: every
 * command here starts in the session's cwd, which the system prompt names, so that line never told anything.
 */
function footer(exitCode: number | null | undefined, signal: string | null | undefined): string | undefined {
  if (signal && (exitCode === null || exitCode === undefined)) return `[Command terminated by signal ${signal}]`;
  return exitCode === 0 ? undefined : `[Command failed with exit code ${exitCode ?? -1}]`;
}

type Ending = { kind: "exit"; exitCode?: number | null; signal?: string | null } | { kind: "timeout" | "aborted" };

/**
 * Runs a `terminal` call in a terminal the editor shows (`terminal/create` with `bash -c <command>` in the session
 * cwd): reports the terminal id through `onProgress` as soon as it exists (the ACP layer embeds it in the tool call),
 * waits for the exit, the call's `timeout` (seconds, default `defaultTimeoutSeconds`) or the abort signal (then kills
 * it), and always releases the terminal. Unlike crow-mcp's terminal, every command runs in a fresh shell: `cd` and
 * `export` do not carry over, and nothing keeps running between calls (no input, keys, or waiting on `""`).
 * Returns undefined for arguments crow-mcp would reject (it answers them).
 */
export async function clientTerminal(
  createTerminal: (params: CreateTerminalParams) => Promise<ClientTerminal>,
  args: Record<string, unknown>,
  context: ClientTerminalContext,
): Promise<ToolResult | undefined> {
  const { command, is_input: isInput = false, timeout, reset = false } = args;
  const validTimeout = timeout === undefined || timeout === null || (typeof timeout === "number" && timeout > 0);
  if (typeof command !== "string" || typeof isInput !== "boolean" || typeof reset !== "boolean" || !validTimeout) {
    return undefined;
  }
  if (Object.keys(args).some((k) => !["command", "is_input", "timeout", "reset"].includes(k))) return undefined;
  if (isInput || command.trim() === "" || KEYS.has(command.trim())) {
    return {
      content:
        "Error: commands run in the editor's terminal, where each call runs one command to completion in a fresh shell: there is no running command to wait for, send input or keys to. Run the whole command again, with a timeout if it may take long.",
      isError: true,
      display: { via: "client" },
    };
  }
  const seconds = typeof timeout === "number" ? timeout : context.defaultTimeoutSeconds;
  if (context.signal.aborted) return { content: "Command cancelled before it started.", isError: true };

  let terminal: ClientTerminal;
  try {
    terminal = await createTerminal({
      command: "bash",
      args: ["-c", command],
      cwd: context.cwd,
      env: [
        { name: "PAGER", value: "cat" },
        { name: "GIT_PAGER", value: "cat" },
      ],
      outputByteLimit: OUTPUT_BYTE_LIMIT,
    });
  } catch (error) {
    return {
      content: `Error: the editor could not start a terminal: ${errorText(error)}`,
      isError: true,
      display: { via: "client" },
    };
  }
  const display: ToolDisplay = { via: "client", terminalId: terminal.id };
  try {
    context.onProgress({ display });
    const ending = await waitForEnd(terminal, seconds * 1000, context.signal);
    if (ending.kind !== "exit") await terminal.kill().catch(() => {});
    const output = await terminal.currentOutput();
    const exitCode = ending.kind === "exit" ? ending.exitCode : output.exitStatus?.exitCode;
    const signal = ending.kind === "exit" ? ending.signal : output.exitStatus?.signal;
    const text = output.output.replace(/\n+$/, "");
    // As crow-mcp's: "(no output)" only when the result would otherwise be empty (a silent failure names its code).
    const parts = text === "" ? [] : [cap(text)];
    if (output.truncated) parts.push(`[The editor kept only the last ${OUTPUT_BYTE_LIMIT / 1024} KB of the output.]`);
    if (ending.kind === "aborted") {
      return { content: [...parts, "[Command cancelled: it was killed.]"].join("\n"), isError: true, display };
    }
    if (ending.kind === "timeout") {
      parts.push(`[Command timed out after ${seconds}s and was killed. Pass a larger timeout if it needs longer.]`);
    }
    const status = footer(exitCode, signal ?? (ending.kind === "timeout" ? "SIGKILL" : undefined));
    if (status) parts.push(status);
    if (ending.kind === "exit" && exitCode === 0 && SHELL_STATE.test(command)) {
      parts.push(
        "[Note: each command runs in a fresh shell in the editor's terminal, so directory changes and exported variables do not carry over to the next command. Combine them in one command, e.g. `cd dir && make`.]",
      );
    }
    return { content: parts.join("\n") || "(no output)", display };
  } finally {
    await terminal.release().catch(() => {});
  }
}

/** Waits for the command's exit, the timeout or the abort, whichever comes first. */
function waitForEnd(terminal: ClientTerminal, timeoutMs: number, signal: AbortSignal): Promise<Ending> {
  return new Promise<Ending>((resolve) => {
    let timer: NodeJS.Timeout | undefined;
    const finish = (ending: Ending) => {
      if (timer) clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
      resolve(ending);
    };
    const onAbort = () => finish({ kind: "aborted" });
    if (signal.aborted) return finish({ kind: "aborted" });
    signal.addEventListener("abort", onAbort, { once: true });
    timer = setTimeout(() => finish({ kind: "timeout" }), timeoutMs);
    terminal.waitForExit().then(
      (status) => finish({ kind: "exit", exitCode: status.exitCode, signal: status.signal }),
      // The editor failed to wait (e.g. the terminal vanished): treat it as an exit and read what is there.
      () => finish({ kind: "exit" }),
    );
  });
}
