/**
 * Running a subagent: a child session (stored with its parent link) that works one prompt to completion with its own
 * fresh context, then closes. Shared by the `task` tool and the `_crow/subagent` method (subagents.ts). The child's
 * activity is condensed into progress text (its tool calls and its text, as they happen) for the parent's tool call.
 */

import type { PermissionAnswer, PermissionMode, PermissionRequest } from "../api/permissions.js";
import type { Crow, CrowEvent, CrowSession } from "../api/types.js";
import type { UserAsker } from "../api/user-question.js";
import type { StopReason } from "../hooks/types.js";
import type { Usage } from "../messages.js";
import type { ToolSet } from "../tools.js";

/** How deep subagents nest: a top-level session is depth 0, its children 1, their children 2 (who may not spawn). */
export const MAX_SUBAGENT_DEPTH = 2;

/** What a subagent run is given. */
export interface SubagentRequest {
  /** Absolute working directory. */
  cwd: string;
  /** The child's other workspace roots (a task's child shares its parent's workspace). */
  additionalDirectories?: readonly string[];
  /** The child's first (and only) user message. */
  prompt: string;
  /** The parent's id: stored as the child's `parentId`. */
  parentId?: string;
  model?: string;
  mode?: PermissionMode;
  /** The child's tools (undefined: the runtime's default tool set). */
  tools?: ToolSet;
  askPermission?: (request: PermissionRequest) => Promise<PermissionAnswer>;
  /** Puts the child's questions to the user (through the parent). */
  askUser?: UserAsker;
  /** Cancels the child's turn (it then ends `cancelled`, its history stays valid). */
  signal?: AbortSignal;
  /** Called with the child's id as soon as it exists (before its turn starts). */
  onStart?: (sessionId: string) => void;
  /** New progress text (an increment: append it to what came before). */
  onProgress?: (text: string) => void;
}

/** How a subagent run ended. */
export interface SubagentOutcome {
  sessionId: string;
  /** The child's final answer (its last assistant text; "" when none). */
  text: string;
  stopReason: StopReason;
  usage?: Usage;
  /** With stopReason `error`: what failed. */
  error?: string;
}

/**
 * The nesting depth of a session: how many ancestors it has (live sessions first, then the store). Cycles and
 * absurd chains stop the walk rather than loop.
 */
export async function sessionDepth(crow: Crow, parentId: string | undefined): Promise<number> {
  let depth = 0;
  let next = parentId;
  const seen = new Set<string>();
  while (next && !seen.has(next) && depth <= MAX_SUBAGENT_DEPTH + 8) {
    seen.add(next);
    depth++;
    const live = crow.session(next);
    next = live ? live.parentId : ((await crow.store?.getSession(next))?.parentId ?? undefined);
  }
  return depth;
}

/**
 * A tool set that borrows another session's tools: the child calls them, but never closes them (they belong to
 * the parent, whose close stops them). Problems were already reported to the parent.
 */
export function borrowedTools(source: ToolSet): ToolSet {
  return {
    definitions: () => source.definitions(),
    resolve: (name) => source.resolve(name),
    ...(source.deferrable ? { deferrable: (name: string) => source.deferrable?.(name) ?? false } : {}),
    failures: () => [],
  };
}

/** The argument worth showing next to a tool name in a one-line summary. */
function callSummary(name: string, args: Record<string, unknown>): string {
  for (const key of ["file_path", "path", "command", "query", "pattern", "url", "description"]) {
    const value = args[key];
    if (typeof value === "string" && value.trim() !== "") {
      const line = value.trim().split("\n")[0] ?? "";
      return `${name}: ${line.length > 100 ? `${line.slice(0, 99)}…` : line}`;
    }
  }
  return name;
}

/**
 * Turns the child's events into progress text: its streamed answer text, and a line per tool call (`→ read: /a.ts`,
 * with the outcome when it did not complete). Text deltas are coalesced per event-loop turn, so a fast model costs
 * one progress report per tick instead of one per token.
 */
export class SubagentProgress {
  private pending = "";
  private scheduled = false;
  private atLineStart = true;
  private readonly names = new Map<string, string>();

  constructor(private readonly emit: (text: string) => void) {}

  event(event: CrowEvent): void {
    switch (event.type) {
      case "text_delta":
        this.push(event.text);
        return;
      case "retry":
        this.line("(the connection to the model was interrupted; retrying)");
        return;
      case "tool_call_pending":
        this.names.set(event.call.id, event.call.name);
        this.line(`→ ${callSummary(event.call.name, event.call.args)}`);
        return;
      case "tool_call_done":
        if (event.status !== "completed") this.line(`  (${this.names.get(event.id) ?? "tool call"} ${event.status})`);
        return;
      case "compaction_started":
        this.line("(compacting the subagent's context)");
        return;
      default:
        return;
    }
  }

  /** Sends what is pending now (before the tool answers: later progress is dropped by the loop). */
  flush(): void {
    this.scheduled = false;
    const text = this.pending;
    if (!text) return;
    this.pending = "";
    this.emit(text);
  }

  private push(text: string): void {
    if (!text) return;
    this.pending += text;
    this.atLineStart = text.endsWith("\n");
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
  }

  /** A line of its own, after the text so far. */
  private line(text: string): void {
    this.pending += `${this.atLineStart ? "" : "\n"}${text}\n`;
    this.atLineStart = true;
    this.flush();
  }
}

/**
 * Creates the child session, runs `prompt` to completion and closes the child (its writes flushed, so its stored
 * history is complete when this resolves). Rejects only when the child cannot be created or its turn cannot start.
 */
export async function runSubagent(crow: Crow, request: SubagentRequest): Promise<SubagentOutcome> {
  const child: CrowSession = await crow.newSession({
    cwd: request.cwd,
    ...(request.additionalDirectories ? { additionalDirectories: request.additionalDirectories } : {}),
    ...(request.parentId ? { parentId: request.parentId } : {}),
    ...(request.model ? { model: request.model } : {}),
    ...(request.mode ? { mode: request.mode } : {}),
    ...(request.tools ? { tools: request.tools } : {}),
    ...(request.askPermission ? { askPermission: request.askPermission } : {}),
    ...(request.askUser ? { askUser: request.askUser } : {}),
  });
  try {
    request.onStart?.(child.id);
    const emit = request.onProgress;
    const progress = emit ? new SubagentProgress(emit) : undefined;
    const run = child.prompt(request.prompt, {
      ...(request.signal ? { signal: request.signal } : {}),
      // Reported as they happen (onEvent); the run is never iterated, so it keeps none.
      events: false,
      ...(progress ? { onEvent: (event: CrowEvent) => progress.event(event) } : {}),
    });
    const result = await run.result;
    progress?.flush();
    return {
      sessionId: child.id,
      text: result.text,
      stopReason: result.stopReason,
      ...(result.usage ? { usage: result.usage } : {}),
      ...(result.error ? { error: result.error.message } : {}),
    };
  } finally {
    await child.close();
  }
}
