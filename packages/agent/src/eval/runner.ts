/**
 * Runs the missing trials of a run: every (task, variant, trial index) not yet recorded, `concurrency` at a time,
 * all in this process on one runtime (one toolserver, many sessions). Each finished trial is recorded at once, so a
 * run killed at any point loses only the trials in flight, which `--resume` runs again; a trial is never recorded
 * twice (the store ignores a second record of the same key).
 */
import type { EvalStore } from "@crow/core";
import type { EvalTask } from "./suite.js";
import { runTrial, type TrialContext, TrialInterrupted, type TrialOutcome } from "./trial.js";
import type { Variant } from "./variants.js";

export interface TrialKey {
  task: EvalTask;
  variant: Variant;
  trial: number;
}

/** What the caller hears while the run goes on. */
export interface RunListener {
  /** Before the first trial: how many there are in all, and how many were recorded before (resume). */
  start(total: number, alreadyDone: number): void;
  trialDone(outcome: TrialOutcome): void;
}

export interface RunRequest {
  context: TrialContext;
  evals: EvalStore;
  tasks: readonly EvalTask[];
  variants: readonly Variant[];
  trials: number;
  concurrency: number;
  signal: AbortSignal;
  listener: RunListener;
}

const keyOf = (task: string, variant: string, trial: number) => JSON.stringify([task, variant, trial]);

/** The run's trials that are not recorded yet, in task, variant, trial order. */
export async function missingTrials(
  evals: EvalStore,
  runId: string,
  tasks: readonly EvalTask[],
  variants: readonly Variant[],
  trials: number,
): Promise<{ missing: TrialKey[]; done: number }> {
  const recorded = new Set((await evals.listTrials(runId)).map((t) => keyOf(t.task, t.variant, t.trial)));
  const missing: TrialKey[] = [];
  let done = 0;
  for (const task of tasks) {
    for (const variant of variants) {
      for (let trial = 0; trial < trials; trial++) {
        if (recorded.has(keyOf(task.name, variant.label, trial))) done++;
        else missing.push({ task, variant, trial });
      }
    }
  }
  return { missing, done };
}

/**
 * Runs what is missing; resolves `interrupted: true` when the signal stopped it before the end. A failure to record
 * a trial (the store is gone) stops the other trials too and rejects once they have wound down.
 */
export async function runMissingTrials(request: RunRequest): Promise<{ interrupted: boolean }> {
  const { context, evals, listener } = request;
  const { missing, done } = await missingTrials(evals, context.runId, request.tasks, request.variants, request.trials);
  listener.start(missing.length + done, done);
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  if (request.signal.aborted) stop.abort();
  request.signal.addEventListener("abort", onAbort, { once: true });
  let next = 0;
  const worker = async () => {
    while (!stop.signal.aborted) {
      const key = missing[next++];
      if (!key) return;
      let outcome: TrialOutcome;
      try {
        outcome = await runTrial(context, key.task, key.variant, key.trial, stop.signal);
      } catch (error) {
        if (error instanceof TrialInterrupted) return;
        throw error;
      }
      await evals.recordTrial(outcome);
      listener.trialDone(outcome);
    }
  };
  const workers = Array.from({ length: Math.max(1, Math.min(request.concurrency, missing.length)) }, () =>
    worker().catch((error: unknown) => {
      stop.abort();
      throw error;
    }),
  );
  try {
    const settled = await Promise.allSettled(workers);
    const failed = settled.find((result) => result.status === "rejected");
    if (failed) throw failed.reason;
  } finally {
    request.signal.removeEventListener("abort", onAbort);
  }
  return { interrupted: request.signal.aborted };
}
