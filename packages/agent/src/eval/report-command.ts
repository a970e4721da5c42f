/** `crow eval report RUN`, `crow eval compare A B`, `crow eval status RUN` and `crow eval list`. */

import type { EvalRunRecord, EvalTrialRecord, Store } from "@crow/core";
import { parseArgs } from "@crow/mcp/parse-args";
import type { AgentConfig } from "../config/index.js";
import { renderComparison, renderReport } from "./render.js";
import { EvalUsageError, storedRunConfig } from "./stored-run.js";
import { compareTrials, summarize, variantsOf } from "./summary.js";
import { renderTrial, selectTrials } from "./trial-report.js";

async function findRun(store: Store, id: string): Promise<EvalRunRecord> {
  const run = await store.evals.getRun(id);
  if (!run) throw new EvalUsageError(`no eval run ${id} in ${store.location} (crow eval list shows the recent ones)`);
  return run;
}

function options(args: readonly string[]) {
  return parseArgs({
    args: [...args],
    options: {
      json: { type: "boolean" },
      list: { type: "boolean" },
      "fail-on-regression": { type: "boolean" },
      trial: { type: "string" },
    },
    allowPositionals: true,
    strict: true,
  });
}

export async function runEvalReport(args: readonly string[], _config: AgentConfig, store: Store): Promise<number> {
  const { values, positionals } = options(args);
  const [id, ...extra] = positionals;
  if (!id || extra.length > 0) throw new EvalUsageError("report takes one RUN id");
  const run = await findRun(store, id);
  const trials = await store.evals.listTrials(run.id);
  if (values.trial !== undefined) {
    const chosen = selectTrials(trials, values.trial);
    if (chosen.length === 0) {
      const tasks = [...new Set(trials.map((t) => t.task))].join(", ") || "none recorded";
      throw new EvalUsageError(
        `--trial ${values.trial}: no such trial in ${run.id} (give TASK[:VARIANT][#N]; tasks: ${tasks})`,
      );
    }
    if (values.json) process.stdout.write(`${JSON.stringify(chosen, null, 2)}\n`);
    else process.stdout.write(chosen.map(renderTrial).join("\n"));
    return 0;
  }
  const summaries = variantsOf(trials, run).map((variant) => summarize(variant, trials));
  if (values.json) process.stdout.write(`${JSON.stringify({ run, variants: summaries, trials }, null, 2)}\n`);
  else process.stdout.write(renderReport(run, summaries, trials));
  return 0;
}

/** The trials of one side of a comparison: `RUN` (with one variant) or `RUN:VARIANT`. */
async function side(store: Store, spec: string): Promise<{ label: string; trials: EvalTrialRecord[] }> {
  const colon = spec.indexOf(":");
  const runId = colon >= 0 ? spec.slice(0, colon) : spec;
  const run = await findRun(store, runId);
  const trials = await store.evals.listTrials(run.id);
  const variants = variantsOf(trials, run);
  const variant = colon >= 0 ? spec.slice(colon + 1) : variants.length === 1 ? variants[0] : undefined;
  if (variant === undefined || !variants.includes(variant)) {
    throw new EvalUsageError(
      `${spec}: name one variant of run ${run.id} as RUN:VARIANT (its variants: ${variants.join(", ") || "none recorded"})`,
    );
  }
  return { label: `${run.id}:${variant}`, trials: trials.filter((t) => t.variant === variant) };
}

export async function runEvalCompare(args: readonly string[], _config: AgentConfig, store: Store): Promise<number> {
  const { values, positionals } = options(args);
  const [a, b, ...extra] = positionals;
  if (!a || !b || extra.length > 0) throw new EvalUsageError("compare takes two runs: A B (RUN or RUN:VARIANT)");
  const comparison = compareTrials(await side(store, a), await side(store, b));
  if (values.json) process.stdout.write(`${JSON.stringify(comparison, null, 2)}\n`);
  else process.stdout.write(renderComparison(comparison));
  return values["fail-on-regression"] && comparison.regression ? 1 : 0;
}

/** `status RUN`: progress from the store (any host); `list`: recent runs. */
export async function runEvalStatus(args: readonly string[], agentConfig: AgentConfig, store: Store): Promise<number> {
  const { values, positionals } = options(args);
  if (values.list) {
    const runs = await store.evals.listRuns();
    if (values.json) process.stdout.write(`${JSON.stringify(runs, null, 2)}\n`);
    else for (const run of runs) process.stdout.write(`${run.id}\t${run.createdAt}\t${run.name ?? ""}\t${run.suite}\n`);
    return 0;
  }
  const [id, ...extra] = positionals;
  if (!id || extra.length > 0) throw new EvalUsageError("status takes one RUN id");
  const run = await findRun(store, id);
  const config = storedRunConfig(run);
  const total = config.tasks.length * config.variants.length * config.trials;
  const trials = await store.evals.listTrials(run.id);
  const passed = trials.filter((t) => t.passed).length;
  // Queued runs: every attempt a worker started (retries after a worker died, duplicates, the ones running now).
  const attempts =
    store.kind === "postgres" ? await (await import("./queue.js")).listAttempts(agentConfig.dbUri, run.id) : [];
  const count = (state: string) => attempts.filter((a) => a.state === state).length;
  const status = {
    runId: run.id,
    total,
    done: trials.length,
    passed,
    left: total - trials.length,
    attempts: attempts.length,
    running: count("running"),
    retried: attempts.filter((a) => a.attempt > 1).length,
    abandoned: count("abandoned"),
    duplicates: count("duplicate"),
    attemptList: attempts.map((a) => ({
      task: a.task,
      variant: a.variant,
      trial: a.trial,
      attempt: a.attempt,
      worker: a.worker,
      state: a.state,
    })),
  };
  if (values.json) process.stdout.write(`${JSON.stringify(status)}\n`);
  else {
    process.stdout.write(`${run.id}: ${status.done}/${total} trials recorded, ${passed} passed, ${status.left} left\n`);
    if (attempts.length > 0) {
      process.stdout.write(
        `attempts: ${attempts.length} (${status.running} running, ${status.retried} retries, ${status.abandoned} abandoned by a dead worker, ${status.duplicates} duplicates not recorded)\n`,
      );
    }
  }
  return 0;
}
