/**
 * Subagents as a built-in extension on the public API: the `task` tool (the model delegates a well-scoped subtask to
 * a child session with a fresh context and gets its final answer back) and the `_crow/subagent` method (a client runs
 * a child session to completion). Children are stored with their parent link (`listSessions({parentId})`), nest at
 * most {@link MAX_SUBAGENT_DEPTH} deep, and are cancelled with their parent's turn (or the method's request).
 */

import { stat } from "node:fs/promises";
import { isAbsolute } from "node:path";
import { z } from "zod";
import type { PermissionMode } from "../api/permissions.js";
import type { CrowSession } from "../api/types.js";
import { errorText } from "../error-text.js";
import type { Usage } from "../messages.js";
import { SUBAGENT_METHOD } from "../methods.js";
import type { ToolResult, ToolSet } from "../tools.js";
import { type Extension, MethodError } from "./api.js";
import { borrowedTools, MAX_SUBAGENT_DEPTH, runSubagent, type SubagentOutcome, sessionDepth } from "./subagent-run.js";

export { SUBAGENT_METHOD };

/** The answer of `_crow/subagent`. */
export interface SubagentResponse {
  /** The child session (stored with `parentId` when a parent was given; load it to see its whole work). */
  sessionId: string;
  /** Its final answer. */
  text: string;
  stopReason: SubagentOutcome["stopReason"];
  usage?: Usage;
  /** With stopReason `error`: the provider failure. */
  error?: string;
}

/** What the runtime lends the extension beyond the public API. */
export interface SubagentHost {
  /** A live session's tools, shared with its children (the editor's fs/terminal and MCP servers included). */
  toolsOf(session: CrowSession): ToolSet | undefined;
  /** Whether the runtime serves a model of this name. */
  knowsModel(name: string): boolean;
}

/** Appended to the task tool's prompt: the child must know nobody will answer its questions. */
export const SUBAGENT_NOTE =
  "\n\n---\nYou are a subagent: another agent delegated this task to you and sees nothing of your work except your " +
  "final message. Work on your own until the task is done (nobody can answer questions), then end with a complete, " +
  "self-contained answer: the findings, file paths and results the task asks for.";

const TASK_DESCRIPTION =
  "Delegate a self-contained subtask to a subagent: same tools, none of this conversation; you get only its final answer. Calls in one message run in parallel.";

const taskParameters = z.object({
  description: z.string().min(1).describe("Short label shown to the user"),
  prompt: z.string().min(1).describe("All it needs: goal, facts, paths, what to report"),
});

/** The task tool's answer to the model. */
export function taskResult(outcome: SubagentOutcome): ToolResult {
  const session = `(subagent session ${outcome.sessionId})`;
  const display = { subagent: { sessionId: outcome.sessionId, stopReason: outcome.stopReason } };
  switch (outcome.stopReason) {
    case "end_turn":
      return { content: `${outcome.text || "The subagent finished without a final answer."}\n\n${session}`, display };
    case "cancelled": {
      const partial = outcome.text ? ` Its last words:\n\n${outcome.text}` : "";
      return { content: `The subagent was cancelled before it finished ${session}.${partial}`, isError: true, display };
    }
    case "error":
      return { content: `The subagent failed: ${outcome.error ?? "unknown error"} ${session}`, isError: true, display };
    default:
      return {
        content: `${outcome.text}\n\n(The subagent stopped early: ${outcome.stopReason}; its answer may be incomplete.) ${session}`,
        display,
      };
  }
}

/** The refusal when a session is already as deep as subagents go. */
function tooDeep(depth: number): string {
  return `Error: subagents may nest at most ${MAX_SUBAGENT_DEPTH} levels deep and this session is at depth ${depth}; do this subtask yourself instead of delegating it.`;
}

/** The validated params of `_crow/subagent`. */
interface SubagentParams {
  cwd: string;
  prompt: string;
  model?: string;
  parentSessionId?: string;
}

function parseParams(params: unknown): SubagentParams {
  const usage = `${SUBAGENT_METHOD} expects {"cwd": "/absolute/path", "prompt": "...", "model"?: "...", "parentSessionId"?: "..."}`;
  if (typeof params !== "object" || params === null || Array.isArray(params)) throw MethodError.invalidParams(usage);
  const p = params as Record<string, unknown>;
  if (typeof p.cwd !== "string" || p.cwd === "") throw MethodError.invalidParams(`cwd is required: ${usage}`);
  if (!isAbsolute(p.cwd)) throw MethodError.invalidParams(`cwd must be an absolute path: ${p.cwd}`);
  if (typeof p.prompt !== "string" || p.prompt.trim() === "")
    throw MethodError.invalidParams(`prompt must be a non-empty string: ${usage}`);
  for (const key of ["model", "parentSessionId"] as const) {
    if (p[key] !== undefined && (typeof p[key] !== "string" || p[key] === ""))
      throw MethodError.invalidParams(`${key} must be a non-empty string when given`);
  }
  return {
    cwd: p.cwd,
    prompt: p.prompt,
    ...(typeof p.model === "string" ? { model: p.model } : {}),
    ...(typeof p.parentSessionId === "string" ? { parentSessionId: p.parentSessionId } : {}),
  };
}

/** The `task` tool and `_crow/subagent`. */
export function subagentsExtension(host: SubagentHost): Extension {
  return (api) => {
    api.registerTool({
      name: "task",
      description: TASK_DESCRIPTION,
      parameters: taskParameters,
      // The child inherits the session's mode, so its own calls are gated as the parent's would be; the delegation
      // itself changes nothing (read-only sessions may delegate read-only work).
      readOnly: true,
      async execute({ description, prompt }, { session, crow: runtime, callId, signal, onProgress }) {
        const depth = await sessionDepth(runtime, session.parentId);
        if (depth >= MAX_SUBAGENT_DEPTH) return { content: tooDeep(depth), isError: true };
        const tools = host.toolsOf(session);
        const outcome = await runSubagent(runtime, {
          cwd: session.cwd,
          additionalDirectories: session.additionalDirectories,
          prompt: prompt + SUBAGENT_NOTE,
          parentId: session.id,
          ...(session.model ? { model: session.model } : {}),
          mode: session.mode,
          ...(tools ? { tools: borrowedTools(tools) } : {}),
          // The user is asked about the child's calls through the parent, on the task's own tool call (the only one
          // the client knows of).
          askPermission: (request) =>
            session.askPermission({ ...request, call: { ...request.call, id: callId }, sessionId: session.id }),
          askUser: {
            modes: (["form", "url"] as const).filter((mode) => session.canAskUser(mode)),
            ask: (question) => session.askUser({ ...question, callId }),
            completed: (id) => session.completeUserQuestion(id),
          },
          signal,
          onStart: (sessionId) =>
            onProgress({ message: `Subagent ${sessionId}: ${description}\n`, display: { subagent: { sessionId } } }),
          onProgress: (message) => onProgress({ message }),
        });
        return taskResult(outcome);
      },
    });

    api.registerMethod(SUBAGENT_METHOD, async (params, { crow: runtime, signal }): Promise<SubagentResponse> => {
      const request = parseParams(params);
      const info = await stat(request.cwd).catch(() => undefined);
      if (!info?.isDirectory()) throw MethodError.invalidParams(`cwd is not a directory: ${request.cwd}`);
      if (request.model !== undefined && !host.knowsModel(request.model))
        throw MethodError.invalidParams(`unknown model "${request.model}"`);

      let mode: PermissionMode | undefined;
      let parentModel: string | undefined;
      let tools: ToolSet | undefined;
      if (request.parentSessionId !== undefined) {
        const id = request.parentSessionId;
        const live = runtime.session(id);
        const stored = live ? undefined : await runtime.store?.getSession(id);
        if (!live && (!stored || stored.archivedFrom !== null))
          throw MethodError.invalidParams(`unknown parent session: ${id}`);
        // The parent's ancestors plus the parent itself: the child's depth.
        const depth = await sessionDepth(runtime, id);
        if (depth > MAX_SUBAGENT_DEPTH) throw MethodError.invalidRequest(tooDeep(depth - 1).replace(/^Error: /, ""));
        if (live) {
          mode = live.mode;
          parentModel = live.model;
          const own = host.toolsOf(live);
          if (own) tools = borrowedTools(own);
        } else if (stored) {
          mode =
            stored.mode === "ask" || stored.mode === "read-only" || stored.mode === "code" ? stored.mode : undefined;
          parentModel = stored.model !== null && host.knowsModel(stored.model) ? stored.model : undefined;
        }
      }
      const model = request.model ?? parentModel;
      const outcome = await runSubagent(runtime, {
        cwd: request.cwd,
        prompt: request.prompt,
        ...(request.parentSessionId ? { parentId: request.parentSessionId } : {}),
        ...(model ? { model } : {}),
        ...(mode ? { mode } : {}),
        ...(tools ? { tools } : {}),
        signal,
      }).catch((error: unknown) => {
        throw new MethodError(-32603, `the subagent could not run: ${errorText(error)}`);
      });
      return {
        sessionId: outcome.sessionId,
        text: outcome.text,
        stopReason: outcome.stopReason,
        ...(outcome.usage ? { usage: outcome.usage } : {}),
        ...(outcome.error ? { error: outcome.error } : {}),
      };
    });
  };
}
