/**
 * Plans as a built-in extension on the public API: the `todo` tool. The model writes its whole list on every call
 * (entries with `content`, `status`, `priority`: exactly ACP's plan entry fields); the list becomes the session's plan
 * (`session.setPlan`, so hosts get a `plan` event: ACP clients a `plan` update, `crow run` a checklist, the SDK an
 * event). The list is stored with the session as the call's arguments in the history; when a stored session opens,
 * the last successful call's list is its plan again. A compaction that summarizes that call away gets the plan back
 * as a `todo` call on its summary message, so the model still sees its plan and a later load still finds it.
 */
import { randomUUID } from "node:crypto";

import { z } from "zod";
import type { PlanEntry } from "../api/types.js";
import type { AssistantMessage, ChatMessage, ToolMessage } from "../messages.js";
import type { Extension } from "./api.js";

/** The tool's name. */
export const TODO_TOOL = "todo";

const entrySchema = z.object({
  content: z.string().trim().min(1, "must be a non-empty description of the step"),
  status: z.enum(["pending", "in_progress", "completed"]),
  priority: z.enum(["high", "medium", "low"]),
});

const todoParameters = z.object({ todos: z.array(entrySchema) });

// Lean: when to plan is the system prompt's; here only what a call does.
const TODO_DESCRIPTION =
  "Your plan as a checklist the user sees. Pass the whole list each time (it replaces the last); keep one step in_progress.";

/** The plan as text for the model (what it wrote, so it can check it). */
export function planText(entries: readonly PlanEntry[]): string {
  if (entries.length === 0) return "The plan is empty.";
  const mark = { pending: "[ ]", in_progress: "[~]", completed: "[x]" } as const;
  const done = entries.filter((e) => e.status === "completed").length;
  const lines = entries.map((e, i) => `${i + 1}. ${mark[e.status]} ${e.content} (${e.priority})`);
  return `Plan updated (${done}/${entries.length} completed):\n${lines.join("\n")}`;
}

/** The plan of a stored history: the list of its last `todo` call that succeeded (empty when none). */
export function planFromHistory(history: readonly ChatMessage[]): PlanEntry[] {
  // Model call id → list, for the calls whose result is not an error.
  const lists = new Map<string, PlanEntry[]>();
  let last: PlanEntry[] = [];
  for (const message of history) {
    if (message.role === "assistant") {
      for (const call of message.tool_calls ?? []) {
        if (call.function.name !== TODO_TOOL) continue;
        let args: unknown;
        try {
          args = JSON.parse(call.function.arguments);
        } catch {
          continue;
        }
        const parsed = todoParameters.safeParse(args);
        if (parsed.success) lists.set(call.id, parsed.data.todos);
      }
    } else if (message.role === "tool") {
      const list = lists.get(message.tool_call_id);
      const text = typeof message.content === "string" ? message.content : "";
      if (list && text.startsWith("Plan updated")) last = list;
      else if (list && text === "The plan is empty.") last = [];
    }
  }
  return last;
}

function samePlan(a: readonly PlanEntry[], b: readonly PlanEntry[]): boolean {
  return (
    a.length === b.length &&
    a.every((e, i) => e.content === b[i]?.content && e.status === b[i]?.status && e.priority === b[i]?.priority)
  );
}

/**
 * `history` (a compacted one) with `plan` re-stated when the history alone would not give it back: the summary
 * message carries a `todo` call with the plan, followed by its result, so the pair sits before the last user message
 * (tool calls keep their results next to them). Undefined when nothing needs to change.
 */
export function keepPlan(
  history: readonly ChatMessage[],
  summary: AssistantMessage,
  plan: readonly PlanEntry[],
): ChatMessage[] | undefined {
  if (samePlan(planFromHistory(history), plan)) return undefined;
  const at = history.indexOf(summary);
  if (at === -1) return undefined;
  const todos = plan.map((e) => ({ content: e.content, status: e.status, priority: e.priority }));
  const id = `plan-${randomUUID().slice(0, 8)}`;
  const call = { id, type: "function" as const, function: { name: TODO_TOOL, arguments: JSON.stringify({ todos }) } };
  const restated: AssistantMessage = { ...summary, tool_calls: [...(summary.tool_calls ?? []), call] };
  const result: ToolMessage = { role: "tool", tool_call_id: id, content: planText(todos) };
  return [...history.slice(0, at), restated, result, ...history.slice(at + 1)];
}

/**
 * The `todo` tool; a stored session's plan is restored from its history when it opens, and kept through compaction.
 */
export const todoExtension: Extension = (api) => {
  api.onSession((session) => {
    const plan = planFromHistory(session.history);
    if (plan.length > 0) session.setPlan(plan);
    return undefined;
  });
  api.on("compacted", ({ history, summary }, { session }) => keepPlan(history, summary, session.plan));
  api.registerTool({
    name: TODO_TOOL,
    description: TODO_DESCRIPTION,
    parameters: todoParameters,
    kind: "think",
    // Only the session's own plan changes: nothing to ask permission for, allowed in read-only mode.
    readOnly: true,
    execute: ({ todos }, { session }) => {
      session.setPlan(todos);
      return planText(todos);
    },
  });
};
