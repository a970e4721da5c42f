/**
 * The one gate between what the agent sends and what `crow run` draws: everything passes through the control-sequence
 * stripper of `@crow/mcp/control-text` before the renderer sees it. The model's text, thoughts, tool titles and
 * arguments, plan entries, permission questions, notices and errors could otherwise carry escape sequences that
 * write the clipboard (OSC 52), set the window title (OSC 0), plant hyperlinks (OSC 8) or clear the screen (CSI 2J)
 * — on a terminal, or behind a pipe that ends at one (`crow run … | cat`).
 *
 * The streamed text and thoughts each keep one stripper for the turn, so a sequence cut between two deltas is still
 * removed; everything else is stripped string by string. `--json` does not come through here: JSON escapes the text
 * itself, and scripts get it as the model sent it.
 */
import type { RequestPermissionRequest, SessionUpdate, StopReason } from "@agentclientprotocol/sdk";
import { ControlStripper, stripControls } from "@crow/mcp/control-text";
import type { RunOutput, SessionInfo } from "./output.js";

/** `value` with every string in it stripped; the same object when nothing needed it (the usual case). */
export function stripDeep<T>(value: T): T {
  if (typeof value === "string") return stripControls(value) as T;
  if (Array.isArray(value)) {
    let changed = false;
    const items = value.map((item: unknown) => {
      const stripped = stripDeep(item);
      if (stripped !== item) changed = true;
      return stripped;
    });
    return (changed ? items : value) as T;
  }
  if (typeof value === "object" && value !== null) {
    let changed = false;
    const entries = Object.entries(value).map(([key, item]) => {
      const stripped = stripDeep(item);
      if (stripped !== item) changed = true;
      return [key, stripped] as const;
    });
    return (changed ? Object.fromEntries(entries) : value) as T;
  }
  return value;
}

export class StrippedOutput implements RunOutput {
  private readonly text = new ControlStripper();
  private readonly thoughts = new ControlStripper();

  constructor(private readonly inner: RunOutput) {}

  session(info: SessionInfo): void {
    this.inner.session(stripDeep(info));
  }

  update(update: SessionUpdate, replay: boolean): void {
    if (update.sessionUpdate === "agent_message_chunk" && update.content.type === "text") {
      const text = this.text.push(update.content.text);
      this.inner.update({ ...update, content: { ...update.content, text } }, replay);
    } else if (update.sessionUpdate === "agent_thought_chunk" && update.content.type === "text") {
      const text = this.thoughts.push(update.content.text);
      this.inner.update({ ...update, content: { ...update.content, text } }, replay);
    } else this.inner.update(stripDeep(update), replay);
  }

  turnStart(prompt: string): void {
    this.inner.turnStart(stripControls(prompt));
  }

  turnEnd(stopReason: StopReason): void {
    // A sequence the model left open does not swallow the start of the next turn.
    this.text.reset();
    this.thoughts.reset();
    this.inner.turnEnd(stopReason);
  }

  permissionQuestion(request: RequestPermissionRequest, keys: string): void {
    this.inner.permissionQuestion(stripDeep(request), keys);
  }

  permissionAnswer(request: RequestPermissionRequest, outcome: string, how: "keyboard" | "yes" | "no-tty"): void {
    this.inner.permissionAnswer(stripDeep(request), outcome, how);
  }

  notice(text: string): void {
    this.inner.notice(stripControls(text));
  }

  question(text: string): void {
    // Stripped by its caller (run/form.ts), which also echoes the erasing of a typed character (\b).
    this.inner.question(text);
  }

  error(message: string): void {
    this.inner.error(stripControls(message));
  }

  pause(): void {
    this.inner.pause();
  }

  finish(sessionId: string | undefined): void {
    this.inner.finish(sessionId);
  }
}
