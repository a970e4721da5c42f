/**
 * One trial: a fresh workspace from the task's environment/, the agent's turn on the instruction in an ordinary Crow
 * session (mode `code`) under the task's agent timeout — or the oracle's solution/solve.sh — then the verifier.
 * What it measured is returned for the store; a trial cut short by the run's own cancel (Ctrl-C) throws
 * {@link TrialInterrupted} and is not recorded, so `--resume` runs it again.
 */

import { tmpdir } from "node:os";
import {
  type Crow,
  type EvalTrialDetails,
  type EvalTrialRecord,
  errorText,
  renderTemplate,
  systemPromptArgs,
  type Usage,
} from "@crow/core";
import type { SandboxPolicy } from "@crow/mcp/sandbox";
import { type AgentConfig, findModel, usageCost } from "../config/index.js";
import { toolRouterFactory } from "../sdk/create-crow.js";
import { SetupError, setUpWorkspace, workdirOf } from "./setup.js";
import type { EvalTask } from "./suite.js";
import { CONTAINER, runInTrial } from "./trial-sandbox.js";
import { trialTools } from "./trial-tools.js";
import { exposedPaths, realOrSelf, SHIMS, unseenHostPaths } from "./trial-view.js";
import type { Variant } from "./variants.js";
import { PASS_REWARD, verify } from "./verify.js";
import { createTrialWorkspace, type TrialWorkspace } from "./workspace.js";

export type TrialOutcome = Omit<EvalTrialRecord, "finishedAt">;

/** The run was cancelled while this trial ran. */
export class TrialInterrupted extends Error {
  override name = "TrialInterrupted";
}

export interface TrialContext {
  runId: string;
  /** The runtime the agent trials share (absent for oracle-only runs). */
  crow?: Crow;
  config: AgentConfig;
  /** Keep the workspace after the trial (for debugging a task). */
  keepWorkspace?: boolean;
  /** Told what the trial has made as it makes it (a queue worker records them, to be cleaned up should it die). */
  onStarted?: (what: { workspace?: string; sessionId?: string }) => void | Promise<void>;
}

/** What the agent's part of a trial measured: the record's fields that the verifier does not decide. */
type AgentMeasure = Pick<
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

const NOTHING: AgentMeasure = {
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
  if (policy.mode === "off") throw new Error("crow eval: the agent's sandbox is off; trials never run unconfined");
  // What the trial's scripts do not see, the agent's shell and file tools do not either (trial-view.ts); kept: the
  // workspace, the terminal's own directory (under the temporary directory), what the policy names.
  const keep = [workspace.root, tmpdir(), ...policy.writable, ...policy.readOnly].map(realOrSelf);
  return {
    ...policy,
    hidden: [...(policy.hidden ?? []), ...workspace.hidden, ...unseenHostPaths(keep)],
    network: policy.network && task.allowInternet,
    binds: [
      ...(policy.binds ?? []),
      { source: workspace.app, target: CONTAINER.app },
      ...(workspace.shims ? [{ source: workspace.shims, target: SHIMS }] : []),
      // CROW_EVAL_EXPOSE: read-only (not inside a writable root), also under /tmp, which the shell has private.
      ...exposedPaths().map((exposed) => ({ source: exposed, target: exposed })),
    ],
  };
}

async function runAgent(
  context: TrialContext,
  task: EvalTask,
  variant: Variant,
  trial: number,
  workspace: TrialWorkspace,
  signal: AbortSignal,
): Promise<AgentMeasure> {
  const crow = context.crow;
  if (!crow) throw new Error("agent trial without a runtime");
  const rendered = variant.prompt
    ? await systemPromptArgs(workspace.app).then((found) => {
        // The task's paths are the container's: the workspace is /app, as in Harbor's.
        const args = { ...found, workspace: CONTAINER.app };
        return { args, text: renderTemplate(variant.prompt?.content ?? "", args, variant.prompt?.id) };
      })
    : undefined;
  const tools = toolRouterFactory(context.config, {
    adjustSandbox: (policy) => agentPolicy(policy, task, workspace),
  });
  const session = await crow.newSession({
    cwd: workspace.app,
    mode: "code",
    tools: trialTools(tools, {
      task: task.name,
      allowInternet: task.allowInternet,
      env: { ...(task.docker?.ok ? task.docker.env : {}), ...task.env.environment },
      workdir: workdirOf(task),
      ...(workspace.shims ? { pathPrefix: SHIMS } : {}),
    }),
    ...(variant.model ? { model: variant.model } : {}),
    ...(rendered ? { systemPrompt: rendered.text } : {}),
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
    }, task.agentTimeoutSec * 1000);
    const onRunAbort = () => turn.abort();
    signal.addEventListener("abort", onRunAbort, { once: true });
    let cost = 0;
    const count = (usage: Usage) => {
      measure.requests++;
      measure.promptTokens += usage.promptTokens;
      measure.completionTokens += usage.completionTokens;
      measure.cachedTokens += usage.cachedTokens ?? 0;
      if (price) cost += usageCost(price, usage);
    };
    try {
      const run = session.prompt(task.instruction, {
        signal: turn.signal,
        // Counted as they happen (onEvent); the run is never iterated, so it keeps none.
        events: false,
        onEvent: (event) => {
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
        title: `eval ${context.runId} ${task.name} ${variant.label} #${trial}`,
      });
      measure.stopReason = timedOut ? "timeout" : result.stopReason;
      if (timedOut) measure.error = `agent timed out after ${task.agentTimeoutSec}s`;
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

async function runOracle(
  task: EvalTask,
  workspace: TrialWorkspace,
  details: EvalTrialDetails,
  signal: AbortSignal,
): Promise<AgentMeasure> {
  if (!task.solution) return { ...NOTHING, error: "task has no solution/solve.sh" };
  const sandbox = { phase: "solution" as const, network: task.allowInternet, cwd: workdirOf(task) };
  const outcome = await runInTrial(workspace, sandbox, ["bash", `${CONTAINER.solution}/solve.sh`], {
    env: workspace.scriptEnv({ ...task.env.environment, ...task.env.solution }),
    timeoutMs: task.agentTimeoutSec * 1000,
    signal,
  });
  details.solverOutput = outcome.output;
  if (signal.aborted) throw new TrialInterrupted("the run was cancelled");
  if (outcome.timedOut) return { ...NOTHING, stopReason: "timeout", error: `solve.sh timed out` };
  const failed = outcome.code === 0 ? null : `solve.sh exited with ${outcome.code}: ${outcome.output.slice(-300)}`;
  return { ...NOTHING, stopReason: "end_turn", error: failed };
}

/** Runs trial `trial` of `task` under `variant`: setup, the agent (or the oracle), the verifier, each timed. */
export async function runTrial(
  context: TrialContext,
  task: EvalTask,
  variant: Variant,
  trial: number,
  signal: AbortSignal,
): Promise<TrialOutcome> {
  const started = performance.now();
  const workspace = createTrialWorkspace(task, [context.config.home]);
  await context.onStarted?.({ workspace: workspace.root });
  const details: EvalTrialDetails = { phaseMs: {} };
  const phaseMs = details.phaseMs ?? {};
  if (task.docker?.ok) details.emulated = task.docker.emulated;
  const interrupted = (error: unknown) => error instanceof TrialInterrupted || signal.aborted;
  try {
    const outcome = (measure: AgentMeasure, reward: number, error: string | null): TrialOutcome => ({
      runId: context.runId,
      task: task.name,
      variant: variant.label,
      trial,
      ...measure,
      reward,
      passed: reward >= PASS_REWARD,
      wallMs: performance.now() - started,
      error,
      details,
    });
    let phase = performance.now();
    try {
      const setup = await setUpWorkspace(task, workspace, signal);
      if (setup.output) details.setupOutput = setup.output;
    } catch (error) {
      if (interrupted(error)) throw new TrialInterrupted("the run was cancelled");
      if (error instanceof SetupError && error.output) details.setupOutput = error.output;
      phaseMs.setup = performance.now() - phase;
      return outcome(NOTHING, 0, `setup: ${errorText(error)}`);
    }
    phaseMs.setup = performance.now() - phase;
    phase = performance.now();
    let measure: AgentMeasure;
    try {
      measure = variant.oracle
        ? await runOracle(task, workspace, details, signal)
        : await runAgent(context, task, variant, trial, workspace, signal);
    } catch (error) {
      if (interrupted(error)) throw new TrialInterrupted("the run was cancelled");
      measure = { ...NOTHING, error: errorText(error) };
    }
    phaseMs.agent = performance.now() - phase;
    const verdict = await verify(task, workspace, signal);
    if (signal.aborted) throw new TrialInterrupted("the run was cancelled");
    phaseMs.verifier = verdict.ms;
    details.verifierOutput = verdict.output;
    if (verdict.rewards) details.rewards = verdict.rewards;
    const error = [measure.error, verdict.error].filter((e) => e !== null).join("; ") || null;
    return outcome(measure, verdict.reward, error);
  } finally {
    if (context.keepWorkspace) {
      process.stderr.write(`crow eval: kept ${workspace.root} (${task.name} · ${variant.label} · #${trial})\n`);
    } else workspace.remove();
  }
}
