/**
 * The agent's part of a trial (or of one step of a multi-step trial): an ordinary Crow session (mode `code`) on the
 * instruction under its timeout, its tools adjusted to the task (trial-tools.ts) in the trial's sandbox — or the
 * oracle's solve.sh. What it measured is returned; a run cancelled meanwhile throws {@link TrialInterrupted}.
 */
import { tmpdir } from "node:os";
import path from "node:path";
import { type EvalTrialRecord, renderTemplate, systemPromptArgs, type Usage } from "@crow/core";
import type { HiddenReason, SandboxPolicy } from "@crow/mcp/sandbox";
import { findModel, usageCost } from "../config/index.js";
import { toolRouterFactory } from "../sdk/create-crow.js";
import { inSubmount } from "./image-mounts.js";
import { privateHostEntries } from "./image-secrets.js";
import { workdirOf } from "./setup.js";
import type { EvalTask } from "./suite.js";
import { type TrialContext, TrialInterrupted } from "./trial-context.js";
import { CONTAINER, runInTrial } from "./trial-sandbox.js";
import { trialTools } from "./trial-tools.js";
import { exposedPaths, realOrSelf, SHIMS, unseenHostPaths } from "./trial-view.js";
import type { Variant } from "./variants.js";
import type { TrialWorkspace } from "./workspace.js";

/** What one agent (or oracle) run works on: the whole task, or one step of a multi-step task. */
export interface TrialPart {
  /** The step's name; undefined for a single-step task. */
  step?: string;
  instruction: string;
  agentTimeoutSec: number;
  /** The directory holding solve.sh, when there is one. */
  solutionDir: string | undefined;
}

/** A single-step task as one part. */
export function wholeTask(task: EvalTask): TrialPart {
  return {
    instruction: task.instruction,
    agentTimeoutSec: task.agentTimeoutSec,
    solutionDir: task.solution ? path.dirname(task.solution) : undefined,
  };
}

/** What the agent's part of a trial measured: the record's fields that the verifier does not decide. */
export type AgentMeasure = Pick<
  EvalTrialRecord,
  | "sessionId"
  | "stopReason"
  | "requests"
  | "promptTokens"
  | "completionTokens"
  | "cachedTokens"
  | "cost"
  | "toolCalls"
  | "toolErrors"
  | "error"
>;

export const NOTHING: AgentMeasure = {
  sessionId: null,
  stopReason: null,
  requests: 0,
  promptTokens: 0,
  completionTokens: 0,
  cachedTokens: 0,
  cost: null,
  toolCalls: 0,
  toolErrors: 0,
  error: null,
};

/**
 * The agent's sandbox in a trial: its workspace shown at /app too (the file tools map /app/… to it), the suite and
 * Crow's home hidden, the network as the task allows. `crow eval` requires the sandbox (its config says `required`),
 * so the policy is never "off" here.
 */
function agentPolicy(policy: SandboxPolicy, task: EvalTask, workspace: TrialWorkspace): SandboxPolicy {
  if (policy.mode === "off") throw new Error("the agent's sandbox is off; trials never run unconfined");
  // What the trial's scripts do not see, the agent's shell and file tools do not either (trial-view.ts); kept: the
  // workspace, the terminal's own directory (under the temporary directory), what the policy names.
  const keep = [workspace.root, tmpdir(), ...policy.writable, ...policy.readOnly].map(realOrSelf);
  const own = policy.hidden ?? [];
  const outOfView = [...workspace.hidden, ...unseenHostPaths(keep)];
  // What other users may not read (/etc/shadow…): hidden, or, with an image, emptied by its mask layer.
  const private_ = privateHostEntries().filter(
    (entry) => !workspace.image || inSubmount(entry, workspace.image.submounts),
  );
  // The read tool's refusal says why (hidden.ts); Crow's own files, and the temporary directory, keep their texts.
  const hiddenReasons: Record<string, HiddenReason> = { ...policy.hiddenReasons };
  for (const entry of outOfView) if (!own.includes(entry)) hiddenReasons[entry] = "outside-view";
  for (const entry of private_) if (!own.includes(entry)) hiddenReasons[entry] = "private";
  return {
    ...policy,
    hidden: [
      ...own,
      ...outOfView,
      // The host's temporary directory too, for the file tools (the shell's /tmp is its own already): other trials'
      // workspaces and any copy of a suite kept there; the trial's own workspace in it stays shown (a writable root).
      realOrSelf(tmpdir()),
      ...private_,
    ],
    hiddenReasons,
    network: policy.network && task.agentInternet,
    binds: [
      ...(policy.binds ?? []),
      // The task's image over the host's system directories (first: what follows is bound on top of it), with what
      // the host mounts below them; its mask layer hides what others may not read (image-secrets.ts).
      ...Object.entries(workspace.image?.dirs ?? {}).map(([dir, source]) => ({ source, target: `/${dir}` })),
      ...(workspace.image?.submounts ?? []).map((submount) => ({ source: submount, target: submount })),
      { source: workspace.app, target: CONTAINER.app },
      ...(workspace.shims ? [{ source: workspace.shims, target: SHIMS }] : []),
      // CROW_EVAL_EXPOSE: read-only (not inside a writable root), also under /tmp, which the shell has private.
      ...exposedPaths().map((exposed) => ({ source: exposed, target: exposed })),
    ],
  };
}

export async function runAgent(
  context: TrialContext,
  task: EvalTask,
  variant: Variant,
  trial: number,
  workspace: TrialWorkspace,
  signal: AbortSignal,
  part: TrialPart = wholeTask(task),
): Promise<AgentMeasure> {
  const crow = context.crow;
  if (!crow) throw new Error("agent trial without a runtime");
  // The task's paths are the container's: the prompt names /app (or the Dockerfile's WORKDIR, where the shell starts
  // and relative paths resolve) and the tree's root /app, as in Harbor's, not the workspace's host path.
  const shownPaths = { workspace: workdirOf(task), treeRoot: CONTAINER.app };
  const rendered = variant.prompt
    ? await systemPromptArgs(workspace.app, { shownPaths }).then((args) => ({
        args,
        text: renderTemplate(variant.prompt?.content ?? "", args, variant.prompt?.id),
      }))
    : undefined;
  const tools = toolRouterFactory(context.config, {
    adjustSandbox: (policy) => agentPolicy(policy, task, workspace),
  });
  const session = await crow.newSession({
    cwd: workspace.app,
    mode: "code",
    tools: trialTools(tools, {
      task: task.name,
      allowInternet: task.agentInternet,
      env: { ...(task.docker?.ok ? task.docker.env : {}), ...task.env.environment },
      workdir: shownPaths.workspace,
      ...(workspace.shims ? { pathPrefix: SHIMS } : {}),
    }),
    ...(variant.model ? { model: variant.model } : {}),
    ...(rendered ? { systemPrompt: rendered.text } : { promptPaths: shownPaths }),
  });
  const measure: AgentMeasure = { ...NOTHING, sessionId: session.id };
  try {
    await context.onStarted?.({ sessionId: session.id });
    if (rendered && variant.prompt) {
      await crow.store?.updateSession(session.id, { promptId: variant.prompt.id, promptArgs: rendered.args });
    }
    const price = findModel(context.config, variant.model ?? context.config.model)?.price;
    const turn = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      turn.abort();
    }, part.agentTimeoutSec * 1000);
    const onRunAbort = () => turn.abort();
    signal.addEventListener("abort", onRunAbort, { once: true });
    let cost = 0;
    const count = (usage: Usage) => {
      measure.promptTokens += usage.promptTokens;
      measure.completionTokens += usage.completionTokens;
      measure.cachedTokens += usage.cachedTokens ?? 0;
      if (price) cost += usageCost(price, usage);
    };
    try {
      const run = session.prompt(part.instruction, {
        signal: turn.signal,
        // Counted as they happen (onEvent); the run is never iterated, so it keeps none.
        events: false,
        onEvent: (event) => {
          // Every model request, answered or not; its tokens only as the provider reports them (many local servers
          // and the scripted mock send no usage: then the requests still count, the tokens stay 0).
          if (event.type === "request_start") measure.requests++;
          if (event.type === "message_appended" && event.usage) count(event.usage);
          if (event.type === "tool_call_done") {
            measure.toolCalls++;
            if (event.status !== "completed" || event.result.isError) measure.toolErrors++;
          }
        },
      });
      const result = await run.result;
      // After the turn: the session titles itself from the first prompt meanwhile; the trial's name says more.
      await crow.store?.updateSession(session.id, {
        title: `eval ${context.runId} ${task.name}${part.step ? ` (${part.step})` : ""} ${variant.label} #${trial}`,
      });
      measure.stopReason = timedOut ? "timeout" : result.stopReason;
      if (timedOut) measure.error = `agent timed out after ${part.agentTimeoutSec}s`;
      else if (result.error) measure.error = result.error.message;
    } finally {
      clearTimeout(timer);
      signal.removeEventListener("abort", onRunAbort);
    }
    measure.cost = price ? cost : null;
    if (signal.aborted) throw new TrialInterrupted("the run was cancelled");
    return measure;
  } finally {
    await session.close();
  }
}

export async function runOracle(
  task: EvalTask,
  workspace: TrialWorkspace,
  details: { solverOutput?: string },
  signal: AbortSignal,
  part: TrialPart = wholeTask(task),
): Promise<AgentMeasure> {
  if (!part.solutionDir)
    return { ...NOTHING, error: `${part.step ? `step ${part.step}` : "task"} has no solution/solve.sh` };
  const sandbox = { phase: "solution" as const, network: task.agentInternet, cwd: workdirOf(task) };
  const mounts = { ...workspace, solution: part.solutionDir };
  const outcome = await runInTrial(mounts, sandbox, ["bash", `${CONTAINER.solution}/solve.sh`], {
    env: workspace.scriptEnv({ ...task.env.environment, ...task.env.solution }),
    timeoutMs: part.agentTimeoutSec * 1000,
    signal,
  });
  details.solverOutput = outcome.output;
  if (signal.aborted) throw new TrialInterrupted("the run was cancelled");
  if (outcome.timedOut) return { ...NOTHING, stopReason: "timeout", error: `solve.sh timed out` };
  const failed = outcome.code === 0 ? null : `solve.sh exited with ${outcome.code}: ${outcome.output.slice(-300)}`;
  return { ...NOTHING, stopReason: "end_turn", error: failed };
}
