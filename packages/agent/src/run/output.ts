/**
 * Where `crow run` shows what happens: the human renderer (terminal-output.ts) or one JSON event per line for
 * scripts (`--json`, here). The client calls these in protocol order; implementations only format.
 */
import type { RequestPermissionRequest, SessionUpdate, StopReason } from "@agentclientprotocol/sdk";
import { stripControls } from "@crow/mcp/control-text";

export interface SessionInfo {
  sessionId: string;
  /** Continued with `-s` (session/load) rather than created. */
  loaded: boolean;
  modeId?: string;
  model?: string;
}

export interface RunOutput {
  session(info: SessionInfo): void;
  /** A `session/update`; `replay` marks the history a loaded session replays. */
  update(update: SessionUpdate, replay: boolean): void;
  turnStart(prompt: string): void;
  turnEnd(stopReason: StopReason): void;
  /** Shows a permission question before the keyboard answer is read. */
  permissionQuestion(request: RequestPermissionRequest, keys: string): void;
  /** The answer given (by the user, `--yes`, or the lack of a terminal). */
  permissionAnswer(request: RequestPermissionRequest, outcome: string, how: "keyboard" | "yes" | "no-tty"): void;
  notice(text: string): void;
  /**
   * Shows part of a question to the person at the keyboard (the message, a field's prompt, the echo of what they
   * type), as given: the caller strips what came from the agent.
   */
  question(text: string): void;
  /** An error for the user (also on stderr in every mode). */
  error(message: string): void;
  /** Erases transient output (the spinner) before something else writes to the terminal. */
  pause(): void;
  /** Called once before exit: how to continue the session. */
  finish(sessionId: string | undefined): void;
}

/** Minimal writable (process.stdout/stderr, or a test sink). */
export interface Sink {
  write(text: string): unknown;
}

/** `--json`: one event per line on stdout; errors also as a line on stderr. */
export class JsonOutput implements RunOutput {
  private sessionId: string | undefined;

  constructor(
    private readonly stdout: Sink,
    private readonly stderr: Sink,
  ) {}

  private emit(event: Record<string, unknown>): void {
    this.stdout.write(`${JSON.stringify(event)}\n`);
  }

  session(info: SessionInfo): void {
    this.sessionId = info.sessionId;
    this.emit({ type: "session", ...info });
  }

  update(update: SessionUpdate, replay: boolean): void {
    const replayed = replay ? { replay: true } : {};
    // The plan is its own event: the whole checklist each time (it replaces the previous one).
    if (update.sessionUpdate === "plan") {
      this.emit({ type: "plan", sessionId: this.sessionId, ...replayed, entries: update.entries });
      return;
    }
    this.emit({ type: "update", sessionId: this.sessionId, ...replayed, update });
  }

  turnStart(prompt: string): void {
    this.emit({ type: "prompt", sessionId: this.sessionId, text: prompt });
  }

  turnEnd(stopReason: StopReason): void {
    this.emit({ type: "stop", sessionId: this.sessionId, stopReason });
  }

  permissionQuestion(request: RequestPermissionRequest, keys: string): void {
    // The question goes to the person at the keyboard, not into the event stream: a terminal, so without the
    // control sequences the model may have put in the title.
    this.stderr.write(`Permission: ${stripControls(request.toolCall.title ?? request.toolCall.toolCallId)}? ${keys} `);
  }

  permissionAnswer(request: RequestPermissionRequest, outcome: string, how: "keyboard" | "yes" | "no-tty"): void {
    this.emit({ type: "permission", sessionId: this.sessionId, toolCall: request.toolCall, outcome, how });
  }

  notice(text: string): void {
    this.emit({ type: "notice", sessionId: this.sessionId, message: text });
  }

  question(text: string): void {
    // For the person at the keyboard, not the event stream (like a permission question).
    this.stderr.write(text);
  }

  error(message: string): void {
    this.emit({ type: "error", sessionId: this.sessionId, message });
    this.stderr.write(`crow: ${stripControls(message)}\n`);
  }

  pause(): void {}

  finish(): void {}
}
