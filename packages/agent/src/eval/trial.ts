/**
 * One trial: a fresh workspace from the task's environment/, the agent's turn on the instruction in an ordinary Crow
 * session (mode `code`) under the task's agent timeout — or the oracle's solution/solve.sh — then the verifier; for a
 * multi-step task, that for each step in order (steps.ts); then the artifacts (artifacts.ts).
 * What it measured is returned for the store; a trial cut short by the run's own cancel (Ctrl-C) throws
 * {@link TrialInterrupted} and is not recorded, so `--resume` runs it again.
 */

import { type EvalStepDetails, type EvalTrialDetails, type EvalTrialRecord, errorText } from "@crow/core";
import { collectArtifacts } from "./artifacts.js";
import { runCollectHooks, runStepSetup } from "./hooks.js";
import { SetupError, setUpWorkspace } from "./setup.js";
import { belowMinimum, type EvalStep, rollUp } from "./steps.js";
import type { EvalTask } from "./suite.js";
import { type AgentMeasure, NOTHING, runAgent, runOracle, type TrialPart, wholeTask } from "./trial-agent.js";
import { type TrialContext, TrialInterrupted } from "./trial-context.js";
import type { Variant } from "./variants.js";
import { planSeparateVerifier, prepareSeparateVerifier, type SeparateVerifier } from "./verifier-env.js";
import { PASS_REWARD, type Verdict, verify } from "./verify.js";
import { createTrialWorkspace, type TrialWorkspace } from "./workspace.js";

export { type TrialContext, TrialInterrupted } from "./trial-context.js";

export type TrialOutcome = Omit<EvalTrialRecord, "finishedAt">;

const NO_VERDICT = { reward: 0, rewards: null };

/** The counters of `b` added to `a`'s (a multi-step trial's totals); the rest is `b`'s. */
function summed(a: AgentMeasure, b: AgentMeasure): AgentMeasure {
  return {
    ...b,
    sessionId: a.sessionId ?? b.sessionId,
    requests: a.requests + b.requests,
    promptTokens: a.promptTokens + b.promptTokens,
    completionTokens: a.completionTokens + b.completionTokens,
    cachedTokens: a.cachedTokens + b.cachedTokens,
    cost: a.cost === null && b.cost === null ? null : (a.cost ?? 0) + (b.cost ?? 0),
    toolCalls: a.toolCalls + b.toolCalls,
    toolErrors: a.toolErrors + b.toolErrors,
  };
}

/**
 * The verifier of `task` (or of its step `spec`): in the trial's workspace, or — Harbor's separate verifier
 * environment — in a fresh one with the agent's artifacts copied in (verifier-env.ts), removed afterwards.
 */
async function verifyWhere(
  context: TrialContext,
  task: EvalTask,
  spec: EvalStep | undefined,
  workspace: TrialWorkspace,
  signal: AbortSignal,
  part: Parameters<typeof verify>[3],
): Promise<Verdict> {
  const plan = planSeparateVerifier(task, spec);
  if (!plan) return verify(task, workspace, signal, part);
  const started = performance.now();
  const failed = (error: string): Verdict => ({
    reward: 0,
    rewards: null,
    error,
    output: "",
    ms: performance.now() - started,
  });
  if (!plan.ok) return failed(plan.reason);
  let separate: SeparateVerifier;
  try {
    separate = await prepareSeparateVerifier(task, plan, workspace, context.config.home, signal);
  } catch (error) {
    if (signal.aborted) throw new TrialInterrupted("the run was cancelled");
    return failed(`separate verifier environment: ${errorText(error)}`);
  }
  try {
    const verdict = await verify(separate.task, separate.workspace, signal, part);
    return { ...verdict, output: `${separate.note}\n${verdict.output}` };
  } finally {
    if (context.keepWorkspace) process.stderr.write(`crow eval: kept ${separate.workspace.root} (the verifier's)\n`);
    else separate.remove();
  }
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
    const phase = performance.now();
    try {
      const setup = await setUpWorkspace(task, workspace, signal, context.config.home);
      if (setup.output) details.setupOutput = setup.output;
      if (setup.image) details.emulated = [...(details.emulated ?? []), setup.image];
    } catch (error) {
      if (interrupted(error)) throw new TrialInterrupted("the run was cancelled");
      if (error instanceof SetupError && error.output) details.setupOutput = error.output;
      phaseMs.setup = performance.now() - phase;
      return outcome(NOTHING, 0, `setup: ${errorText(error)}`);
    }
    phaseMs.setup = performance.now() - phase;
    // One part (a single-step task), or each step in order: the agent (or the oracle), then that part's verifier.
    const parts: { part: TrialPart; verifier: Parameters<typeof verify>[3]; step?: EvalStep }[] =
      task.steps.length === 0
        ? [{ part: wholeTask(task), verifier: undefined }]
        : task.steps.map((step) => ({
            step,
            part: {
              step: step.name,
              instruction: step.instruction,
              agentTimeoutSec: step.agentTimeoutSec,
              solutionDir: step.solutionDir,
            },
            verifier: { timeoutSec: step.verifierTimeoutSec, env: step.verifierEnv, stepTests: step.testsDir },
          }));
    let total: AgentMeasure = NOTHING;
    const errors: string[] = [];
    const verdicts: Verdict[] = [];
    const steps: EvalStepDetails[] = [];
    phaseMs.agent = 0;
    phaseMs.verifier = 0;
    for (const [index, { part, verifier, step: spec }] of parts.entries()) {
      const phase = performance.now();
      const ran: { solverOutput?: string } = {};
      let hookOutput = "";
      // A step's workdir/ (and its setup.sh) before its agent: a setup.sh that fails ends the trial there, unverified.
      if (spec?.workdir) {
        const setup = await runStepSetup(task, workspace, spec.workdir, part.agentTimeoutSec, signal);
        if (signal.aborted) throw new TrialInterrupted("the run was cancelled");
        hookOutput = setup.output;
        if (setup.error) {
          const failed = `step's setup: ${setup.error}`;
          steps.push({ name: spec.name, reward: 0, error: failed, sessionId: null, stopped: failed, hookOutput });
          errors.push(`step ${spec.name}: ${failed}`);
          phaseMs.agent += performance.now() - phase;
          break;
        }
      }
      let measure: AgentMeasure;
      try {
        measure = variant.oracle
          ? await runOracle(task, workspace, ran, signal, part)
          : await runAgent(context, task, variant, trial, workspace, signal, part);
      } catch (error) {
        if (interrupted(error)) throw new TrialInterrupted("the run was cancelled");
        measure = { ...NOTHING, error: errorText(error) };
      }
      const hooks = [...task.collect, ...(spec?.collect ?? [])];
      if (hooks.length > 0) hookOutput += await runCollectHooks(task, workspace, hooks, signal);
      if (signal.aborted) throw new TrialInterrupted("the run was cancelled");
      phaseMs.agent += performance.now() - phase;
      total = index === 0 ? measure : summed(total, measure);
      const verdict = await verifyWhere(context, task, spec, workspace, signal, verifier);
      if (signal.aborted) throw new TrialInterrupted("the run was cancelled");
      phaseMs.verifier += verdict.ms;
      verdicts.push(verdict);
      const error = [measure.error, verdict.error].filter((e) => e !== null).join("; ") || null;
      if (!part.step) {
        if (ran.solverOutput !== undefined) details.solverOutput = ran.solverOutput;
        details.verifierOutput = verdict.output;
        if (hookOutput) details.hookOutput = hookOutput;
        if (error) errors.push(error);
        continue;
      }
      const step: EvalStepDetails = {
        name: part.step,
        reward: verdict.reward,
        error,
        sessionId: measure.sessionId,
        verifierOutput: verdict.output,
        ...(verdict.rewards ? { rewards: verdict.rewards } : {}),
        ...(ran.solverOutput !== undefined ? { solverOutput: ran.solverOutput } : {}),
        ...(hookOutput ? { hookOutput } : {}),
      };
      steps.push(step);
      if (error) errors.push(`step ${part.step}: ${error}`);
      const min = task.steps[index]?.minReward;
      if (index < parts.length - 1 && belowMinimum(min, verdict.reward, verdict.rewards)) {
        step.stopped = `reward below min_reward ${JSON.stringify(min)}: the remaining steps did not run`;
        errors.push(`stopped after step ${part.step}: ${step.stopped}`);
        break;
      }
    }
    const { reward, rewards } = steps.length > 0 ? rollUp(task.rewardStrategy, verdicts) : (verdicts[0] ?? NO_VERDICT);
    if (rewards) details.rewards = rewards;
    if (steps.length > 0) details.steps = steps;
    const artifacts = collectArtifacts(task.artifacts, workspace);
    if (artifacts.length > 0) details.artifacts = artifacts;
    return outcome({ ...total, error: null }, reward, errors.join("; ") || null);
  } finally {
    if (context.keepWorkspace) {
      process.stderr.write(`crow eval: kept ${workspace.root} (${task.name} · ${variant.label} · #${trial})\n`);
    } else workspace.remove();
  }
}
