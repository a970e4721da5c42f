/**
 * The human renderer of `crow run`.
 *
 * On a TTY everything goes to stdout: streamed Markdown-ish text, dimmed thoughts, one line per tool call whose
 * status icon is redrawn in place while those lines are still the last output (○ pending, ◐ running, ✓ done,
 * ✗ failed), colored diffs of writes and edits, the plan as a checklist (redrawn in place while it is the last
 * output), and a spinner while waiting.
 * Without a TTY the output is plain (no ANSI, no spinner): the assistant's answer alone on stdout, so
 * `crow run "…" > answer.md` captures just the answer, and the activity (tool lines, thoughts, notices) on stderr.
 */
import path from "node:path";
import type {
  PlanEntry,
  RequestPermissionRequest,
  SessionUpdate,
  StopReason,
  ToolCallContent,
  ToolCallStatus,
  ToolKind,
} from "@agentclientprotocol/sdk";
import type { ToolDiagnostics } from "@crow/core";
import { unifiedDiff } from "../base/unified-diff.js";
import { type Style, style } from "./ansi.js";
import { Channel } from "./channel.js";
import { diagnosticsLines, diagnosticsOf } from "./diagnostics-view.js";
import { MarkdownStyler } from "./markdown.js";
import type { RunOutput, SessionInfo, Sink } from "./output.js";
import { planLines } from "./plan-view.js";
import { Spinner } from "./spinner.js";
import { permissionQuestionLines, styledDiffLine } from "./tool-view.js";

export interface TerminalOutputOptions {
  stdout: Sink;
  stderr: Sink;
  /** stdout is a terminal: ANSI, spinner, live tool lines. */
  tty: boolean;
  /** Colors on a TTY (off with NO_COLOR). */
  color: boolean;
  /** Terminal width (tool lines are cut to fit, so redrawing them in place stays exact). */
  columns: () => number;
  /** The session's working directory (diff paths are shown relative to it). */
  cwd: string;
  /**
   * What the "Continue with" hint needs besides `-s ID` to reach the same session from the same shell (`--connect
   * URL`, `--token-file FILE`, `-c DIR`), each a shell word, with a leading space; empty when nothing.
   */
  continueArgs?: string;
}

interface ToolState {
  id: string;
  title: string;
  kind?: ToolKind | null;
  status: ToolCallStatus;
  content?: ToolCallContent[] | null;
  /** What its result's change did to the language server's diagnostics. */
  diagnostics?: ToolDiagnostics;
  /** Details (diffs, output) already printed. */
  detailed: boolean;
}

type Block = "text" | "thought" | "tool" | "user" | "other";

const STOP_NOTES: Partial<Record<StopReason, string>> = {
  cancelled: "Cancelled.",
  max_tokens: "Stopped: the model reached its output token limit.",
  max_turn_requests: "Stopped: the step limit for one prompt was reached (max_steps_per_turn).",
  refusal: "The model refused to continue.",
};

const textOf = (content: readonly ToolCallContent[] | null | undefined): string =>
  (content ?? [])
    .map((c) => (c.type === "content" && c.content.type === "text" ? c.content.text : ""))
    .filter((t) => t.trim() !== "")
    .join("\n");

export class TerminalOutput implements RunOutput {
  private readonly s: Style;
  private readonly spinner: Spinner | undefined;
  /** Assistant text. */
  private readonly text: Channel;
  /** Everything else (the same channel on a TTY). */
  private readonly activity: Channel;
  private readonly markdown: MarkdownStyler;
  private readonly tools = new Map<string, ToolState>();
  /** Tool lines that are still the last lines printed, in order (redrawn in place on a status change). */
  private live: string[] = [];
  private block: Block | undefined;
  private running = false;
  private mode: string | undefined;
  private usage: { used: number; size: number } | undefined;
  /** The spinner's label while a request is being retried (`retrying 2/4: connection refused`). */
  private retrying: string | undefined;
  /** The plan drawn last: its line count and the channel's write count right after it (redrawn in place if unchanged). */
  private planDrawn: { lines: number; writes: number } | undefined;

  constructor(private readonly options: TerminalOutputOptions) {
    this.s = style(options.tty && options.color);
    const write = (text: string) => options.stdout.write(text);
    this.spinner = options.tty ? new Spinner(write, this.s) : undefined;
    const clear = () => this.spinner?.clear();
    // On a terminal the answer is word-wrapped to its width; piped, it passes through as the model wrote it.
    this.text = new Channel(options.stdout, clear, options.tty ? () => options.columns() : undefined);
    this.activity = options.tty ? this.text : new Channel(options.stderr, clear);
    this.markdown = new MarkdownStyler(this.s);
  }

  session(info: SessionInfo): void {
    this.mode = info.modeId;
    if (info.loaded) this.note(`Continuing session ${info.sessionId}.`);
  }

  update(update: SessionUpdate, _replay: boolean): void {
    if (update.sessionUpdate !== "notice" && update.sessionUpdate !== "usage_update") this.retrying = undefined;
    switch (update.sessionUpdate) {
      case "agent_message_chunk":
        if (update.content.type === "text") {
          this.enter("text");
          this.text.writeWrapped(this.markdown.push(update.content.text));
          this.live = [];
        }
        break;
      case "agent_thought_chunk":
        if (update.content.type === "text") this.thought(update.content.text);
        break;
      case "user_message_chunk":
        // Live, only steers come as user chunks (the prompt was shown as it was sent): shown where the model got them.
        if (update.content.type === "text") {
          if (this.block !== "user") {
            this.enter("user");
            this.activity.write(this.s.bold(this.s.green("› ")));
          }
          this.activity.write(this.s.bold(update.content.text));
          this.live = [];
        }
        break;
      case "tool_call":
      case "tool_call_update":
        this.tool(update);
        break;
      case "plan":
        this.plan(update.entries);
        break;
      case "current_mode_update":
        if (update.currentModeId !== this.mode) this.note(`Mode: ${update.currentModeId}`);
        this.mode = update.currentModeId;
        break;
      case "usage_update":
        this.usage = { used: update.used, size: update.size };
        break;
      case "notice": {
        const text = update.description ?? update.title ?? "";
        // A retry: on a terminal the spinner says it; piped, one line on stderr per retry.
        if (text.startsWith("retrying ")) this.retrying = text;
        if (!text.startsWith("retrying ") || !this.spinner)
          this.note(text, update.severity === "error" ? "red" : "yellow");
        break;
      }
      default:
        break;
    }
    this.wait();
  }

  turnStart(): void {
    this.running = true;
    this.retrying = undefined;
    this.block = undefined;
    this.tools.clear();
    this.live = [];
    this.wait();
  }

  turnEnd(stopReason: StopReason): void {
    this.running = false;
    this.spinner?.stop();
    this.text.writeWrapped(this.markdown.flush());
    this.text.newline();
    this.activity.newline();
    const note = STOP_NOTES[stopReason];
    if (note) this.note(note, stopReason === "cancelled" ? "yellow" : "red");
    this.block = undefined;
  }

  permissionQuestion(request: RequestPermissionRequest, keys: string): void {
    this.pause();
    this.enter("other");
    const call = request.toolCall;
    const title = call.title ?? this.tools.get(call.toolCallId)?.title ?? call.toolCallId;
    this.activity.write(`${permissionQuestionLines(call, title, this.s).join("\n")}\n  ${keys} ${this.s.dim("›")} `);
    this.live = [];
  }

  permissionAnswer(_request: RequestPermissionRequest, outcome: string, how: "keyboard" | "yes" | "no-tty"): void {
    if (how === "keyboard") this.activity.write(`${outcome}\n`);
    else if (how === "yes") this.note(`Allowed by --yes: ${_request.toolCall.title ?? "tool call"}`);
    else this.note(`Rejected ${_request.toolCall.title ?? "tool call"}: no terminal to ask (pass --yes to allow).`);
  }

  notice(text: string): void {
    this.note(text, "yellow");
    this.wait();
  }

  question(text: string): void {
    this.pause();
    this.enter("other");
    this.activity.write(text);
    this.live = [];
  }

  error(message: string): void {
    this.spinner?.stop();
    this.text.newline();
    this.activity.newline();
    this.options.stderr.write(`${this.s.red(`crow: ${message}`)}\n`);
  }

  pause(): void {
    this.spinner?.stop();
  }

  finish(sessionId: string | undefined): void {
    this.spinner?.stop();
    this.text.writeWrapped(this.markdown.flush());
    this.text.newline();
    this.activity.newline();
    if (!sessionId) return;
    const usage = this.usage ? ` (context ${this.usage.used}/${this.usage.size} tokens)` : "";
    this.options.stderr.write(
      `${this.s.dim(`Session ${sessionId}${usage}. Continue with: crow run -s ${sessionId}${this.options.continueArgs ?? ""} "<prompt>"`)}\n`,
    );
  }

  /** Switches block kind: ends the previous block's line and flushes held-back Markdown markers. */
  private enter(block: Block): void {
    if (this.block === block) return;
    if (this.block === "text") this.text.writeWrapped(this.markdown.flush());
    this.text.newline();
    this.activity.newline();
    this.block = block;
  }

  private note(text: string, color: "yellow" | "red" | "dim" = "dim"): void {
    this.spinner?.clear();
    this.enter("other");
    this.activity.write(`${this.s[color](text)}\n`);
    this.live = [];
  }

  /**
   * The plan as a checklist. On a TTY a new version replaces the previous one in place while that is still the last
   * output; otherwise (or once something else was printed) it is printed again below.
   */
  private plan(entries: readonly PlanEntry[]): void {
    const lines = planLines(entries, this.s, this.options.tty, (text, reserve) => this.fit(text, reserve));
    const previous = this.planDrawn;
    if (this.options.tty && previous && previous.writes === this.activity.writes && this.activity.atLineStart) {
      // Up to the old plan's first line, clear everything below it, draw the new one.
      this.activity.write(`\x1b[${previous.lines}A\r\x1b[J${lines.join("\n")}\n`);
    } else {
      this.enter("other");
      this.activity.write(`${lines.join("\n")}\n`);
    }
    this.planDrawn = { lines: lines.length, writes: this.activity.writes };
    this.live = [];
  }

  private thought(text: string): void {
    if (this.block !== "thought") {
      this.enter("thought");
      if (!this.s.enabled) this.activity.write("[thinking] ");
    }
    // Styled per line so a terminal never carries the dim attribute past a line end.
    this.activity.write(
      text
        .split("\n")
        .map((line) => this.s.dim(this.s.italic(line)))
        .join("\n"),
    );
    this.live = [];
  }

  /** Restarts the spinner while a turn runs (it appears after a quiet moment). */
  private wait(): void {
    if (!this.running || !this.spinner) return;
    const runningTool = [...this.tools.values()].find((t) => t.status === "in_progress");
    const label = this.retrying ?? (runningTool ? `running ${runningTool.title}` : "thinking…");
    this.spinner.start(this.fit(label, 4), this.text.atLineStart);
  }

  private fit(text: string, reserve: number): string {
    const width = Math.max(20, this.options.columns() - reserve);
    const flat = text.replace(/\s*\n\s*/g, " ");
    return flat.length > width ? `${flat.slice(0, width - 1)}…` : flat;
  }

  private toolLine(tool: ToolState): string {
    if (!this.options.tty) {
      const label = { pending: "pending", in_progress: "running", completed: "done", failed: "failed" }[tool.status];
      return `[${label}] ${tool.title}`;
    }
    const icon = {
      pending: this.s.dim("○"),
      in_progress: this.s.cyan("◐"),
      completed: this.s.green("✓"),
      failed: this.s.red("✗"),
    }[tool.status];
    const title = this.fit(tool.title, 3);
    return `${icon} ${tool.status === "failed" ? this.s.red(title) : title}`;
  }

  private tool(update: Extract<SessionUpdate, { sessionUpdate: "tool_call" | "tool_call_update" }>): void {
    const known = this.tools.get(update.toolCallId);
    const state: ToolState = known ?? {
      id: update.toolCallId,
      title: update.title ?? update.toolCallId,
      status: update.status ?? "pending",
      detailed: false,
    };
    const before = known?.status;
    if (update.title) state.title = update.title;
    if (update.kind) state.kind = update.kind;
    if (update.status) state.status = update.status;
    if (update.content) state.content = update.content;
    const diagnostics = diagnosticsOf(update._meta);
    if (diagnostics) state.diagnostics = diagnostics;
    this.tools.set(state.id, state);
    // A thinking aid (the todo tool) shows as what it produced, the plan; only its failure gets a line.
    if (state.kind === "think" && state.status !== "failed") return;
    const changed = !known || before !== state.status;
    const finished = state.status === "completed" || state.status === "failed";
    // Piped or redirected, a line cannot be redrawn: one line per call, when it finished (a log, not a display).
    if (changed && (this.options.tty || finished)) this.drawTool(state);
    if ((state.status === "completed" || state.status === "failed") && !state.detailed) {
      state.detailed = true;
      this.details(state);
    }
  }

  private drawTool(tool: ToolState): void {
    const at = this.live.indexOf(tool.id);
    if (this.options.tty && at >= 0 && this.text.atLineStart) {
      // Redraw the live block in place: up to its first line, rewrite every line, end below it again.
      const lines = this.live.map((id) => this.toolLine(this.tools.get(id) as ToolState));
      this.text.write(`\x1b[${this.live.length}A${lines.map((l) => `\r\x1b[K${l}\n`).join("")}`);
      return;
    }
    this.enter("tool");
    this.activity.write(`${this.toolLine(tool)}\n`);
    this.live.push(tool.id);
  }

  /** After a tool finished: its diffs, and the output of a failed call or a command. */
  private details(tool: ToolState): void {
    const lines: string[] = [];
    for (const item of tool.content ?? []) {
      if (item.type !== "diff") continue;
      const rel = path.relative(this.options.cwd, item.path);
      const shown = rel && !rel.startsWith("..") && !path.isAbsolute(rel) ? rel : item.path;
      for (const line of unifiedDiff(shown, item.oldText, item.newText))
        lines.push(`  ${styledDiffLine(line, this.s)}`);
    }
    if (tool.diagnostics) lines.push(...diagnosticsLines(tool.diagnostics, this.options.cwd, this.s));
    const output = textOf(tool.content);
    if (output && (tool.status === "failed" || tool.kind === "execute")) {
      const all = output.replace(/\n+$/, "").split("\n");
      const max = tool.status === "failed" ? 6 : 8;
      // A failure's reason is at the top; a command's result is at the bottom.
      const shown = tool.status === "failed" ? all.slice(0, max) : all.slice(-max);
      const skipped = all.length - shown.length;
      if (skipped > 0 && tool.status !== "failed") lines.push(`  ${this.s.dim(`│ … ${skipped} earlier lines`)}`);
      for (const line of shown) {
        const cut = this.options.tty ? this.fit(line, 6) : line;
        lines.push(`  ${this.s.dim(`│ ${tool.status === "failed" ? this.s.red(cut) : cut}`)}`);
      }
      if (skipped > 0 && tool.status === "failed") lines.push(`  ${this.s.dim(`│ … ${skipped} more lines`)}`);
    }
    if (lines.length === 0) return;
    this.enter("tool");
    this.activity.write(`${lines.join("\n")}\n`);
    this.live = [];
  }
}
