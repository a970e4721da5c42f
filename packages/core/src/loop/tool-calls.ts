import { errorText } from "../error-text.js";
import type { LoopHookContext, LoopHooks } from "../hooks/types.js";
import type { AssembledToolCall } from "../llm/types.js";
import type { ToolDefinition, ToolMessage, ToolOutcome } from "../messages.js";
import {
  callDisplay,
  type ResolvedTool,
  type ToolCallRequest,
  type ToolProgress,
  type ToolResult,
  type ToolSet,
  toolKind,
} from "../tools.js";
import { ABORTED, raceAbort } from "./channel.js";
import type { LoopEvent, ToolCallStatus } from "./types.js";

interface Outcome {
  status: ToolCallStatus;
  result: ToolResult;
}

/** When each call started running (`performance.now()`), for the duration stored with its result. */
type StartTimes = Map<string, number>;

/** What the tool phase needs from the loop. */
export interface ToolPhase {
  tools: ToolSet;
  hooks: LoopHooks;
  ctx: LoopHookContext;
  signal: AbortSignal;
  emit: (event: LoopEvent) => void;
  append: (message: ToolMessage, outcome: ToolOutcome) => void;
}

const CANCELLED: Outcome = {
  status: "cancelled",
  result: { content: "Tool call cancelled by the user.", isError: true },
};
const MAX_RAW_SHOWN = 2000;

function failed(content: string): Outcome {
  return { status: "failed", result: { content, isError: true } };
}

/** Why a call cannot run at all (unknown tool, unparseable arguments), as an error result for the model. */
function refusal(call: AssembledToolCall, tool: ResolvedTool | undefined, tools: ToolDefinition[]): string {
  if (!tool) {
    const names = tools.map((t) => t.function.name).join(", ") || "none";
    return `Error: there is no tool named "${call.name}". Available tools: ${names}.`;
  }
  if (call.status.kind === "invalid") {
    const raw = call.status.original.slice(0, MAX_RAW_SHOWN);
    return (
      `Error: the arguments of your "${call.name}" call could not be parsed as a JSON object (${call.status.error}). ` +
      `Raw arguments: ${raw}\nRetry with valid JSON arguments matching the tool's schema.`
    );
  }
  return "";
}

/**
 * Runs the tool calls of one assistant message: gates run one after another in call order (a permission prompt
 * at a time), executions overlap, `tool_call_done` is emitted as each finishes, and the tool messages are appended
 * in call order. On abort, every call without a result gets a "cancelled" result at once (late results are
 * dropped). `refuseAll` answers every call with that error instead of running it (e.g. a truncated response).
 * Always appends exactly one tool message per call.
 */
export async function runToolCalls(
  calls: AssembledToolCall[],
  tools: ToolDefinition[],
  phase: ToolPhase,
  refuseAll?: string,
): Promise<void> {
  const { emit, signal, hooks, ctx } = phase;
  const results = new Map<string, Outcome>();
  const started: StartTimes = new Map();
  const ended = new Map<string, number>();
  // Records a call's outcome once; after an abort only "cancelled" is accepted (a late result is dropped).
  const finish = (id: string, outcome: Outcome): Outcome => {
    if (!results.has(id) && !(signal.aborted && outcome.status !== "cancelled")) {
      results.set(id, outcome);
      ended.set(id, performance.now());
      emit({ type: "tool_call_done", id, status: outcome.status, result: outcome.result });
    }
    return results.get(id) ?? CANCELLED;
  };
  const outcomes: Array<Promise<Outcome>> = [];
  // Announce every call of the message first, so a client shows them all even if the turn is cancelled early.
  // Each call's name is resolved here, once; the gates and the execution get what it resolved to.
  const resolved = calls.map((call) => {
    const tool = phase.tools.resolve(call.name);
    const kind = tool?.kind ?? toolKind(call.name);
    const rawArguments = call.status.kind === "ok" ? call.arguments : call.status.original;
    const display = tool?.display(call.args) ?? callDisplay(call.name, call.args);
    emit({
      type: "tool_call_pending",
      call: { id: call.id, name: call.name, kind, args: call.args, rawArguments, display },
    });
    return { call, tool, kind, display };
  });
  for (const { call, tool, kind } of resolved) {
    const refused = refuseAll ?? refusal(call, tool, tools);
    if (refused || !tool) {
      outcomes.push(Promise.resolve(finish(call.id, failed(refused))));
      continue;
    }
    const { definition } = tool;
    let request: ToolCallRequest = { id: call.id, name: call.name, tool: definition.function.name, args: call.args };
    const decision = await raceAbort(hooks.beforeToolCall({ call: request, kind, definition, tool }, ctx), signal);
    if (decision === ABORTED) break;
    if (decision && "block" in decision) {
      outcomes.push(
        Promise.resolve(finish(call.id, { status: "blocked", result: { content: decision.reason, isError: true } })),
      );
      continue;
    }
    if (decision) request = { ...request, args: decision.args };
    started.set(call.id, performance.now());
    emit({ type: "tool_call_running", id: call.id, args: request.args });
    const onProgress = (progress: ToolProgress) => {
      if (!results.has(call.id) && !signal.aborted) emit({ type: "tool_call_progress", id: call.id, progress });
    };
    const run = async (): Promise<Outcome> => {
      let result: ToolResult;
      try {
        result = await tool.run(request, { signal, onProgress });
      } catch (error) {
        result = { content: `Error: ${errorText(error)}`, isError: true };
      }
      result = await hooks.afterToolCall({ call: request, kind, result }, ctx);
      return finish(call.id, { status: result.isError ? "failed" : "completed", result });
    };
    outcomes.push(run());
  }
  for (const [i, call] of calls.entries()) {
    const pending = outcomes[i];
    const outcome = results.get(call.id) ?? (pending ? await raceAbort(pending, signal) : ABORTED);
    const final = outcome === ABORTED ? finish(call.id, CANCELLED) : outcome;
    const from = started.get(call.id);
    const durationMs = from === undefined ? 0 : Math.max(0, (ended.get(call.id) ?? performance.now()) - from);
    // The display as the host last showed it: the announced one with the result's over it.
    const display = { ...resolved[i]?.display, ...final.result.display };
    phase.append(
      { role: "tool", tool_call_id: call.id, content: final.result.content },
      { isError: final.result.isError === true, durationMs: Math.round(durationMs), display },
    );
  }
}
