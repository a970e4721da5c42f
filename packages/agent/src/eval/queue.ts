/**
 * Many machines: with a PostgreSQL store, `crow eval run --queue` puts one pg-boss job per missing trial on that
 * database, and `crow eval worker` processes on any hosts work them off (each with its own runtime: one toolserver,
 * many sessions). A job expires when its worker does not finish it in time (a worker killed mid-trial): pg-boss's
 * maintenance fails it and it is retried by another worker. A trial is recorded once whatever happens (the store
 * ignores a second record), a worker skips a trial it finds recorded already, and one still running in this worker
 * (its job expired under it) is waited for rather than run twice.
 *
 * Why pg-boss 10: it runs on the Node versions Crow supports (≥ 20; pg-boss 12 needs Node ≥ 22.12, graphile-worker
 * 0.18 needs ≥ 22.18), needs nothing but the PostgreSQL the store already uses, and gives expiry with retries.
 */
import type { Crow, EvalRunRecord, Store } from "@crow/core";
import type PgBoss from "pg-boss";
import { log } from "../base/log.js";
import type { AgentConfig } from "../config/index.js";
import { createCrow } from "../sdk/create-crow.js";
import type { TrialKey } from "./runner.js";
import { type StoredRunConfig, storedTasks, storedVariants } from "./stored-run.js";
import type { EvalTask } from "./suite.js";
import { runTrial, TrialInterrupted } from "./trial.js";
import type { Variant } from "./variants.js";

/** The one pg-boss queue of eval trials (every run's). */
export const EVAL_QUEUE = "crow-eval-trials";
/** Time a job may take beyond its task's agent and verifier timeouts (workspace, session, toolserver start). */
const EXPIRY_MARGIN_SEC = 120;
/** Attempts after the first: a trial whose worker died is run again. */
const RETRY_LIMIT = 3;

export interface TrialJob {
  runId: string;
  task: string;
  variant: string;
  trial: number;
}

/** The queue's database: the store's own (a PostgreSQL `db_uri`). */
async function startBoss(dbUri: string, options: { supervise: boolean; maintenanceSeconds?: number }): Promise<PgBoss> {
  const { default: PgBossClass } = await import("pg-boss");
  const boss = new PgBossClass({
    connectionString: dbUri,
    max: 4,
    schedule: false,
    supervise: options.supervise,
    ...(options.maintenanceSeconds ? { maintenanceIntervalSeconds: options.maintenanceSeconds } : {}),
  });
  boss.on("error", (error: Error) => log.warn("eval queue", error.message));
  await boss.start();
  await boss.createQueue(EVAL_QUEUE);
  return boss;
}

/** Enqueues the given trials of `run`; resolves to how many were enqueued. */
export async function enqueueTrials(
  dbUri: string,
  run: EvalRunRecord,
  trials: readonly TrialKey[],
  expirySec?: number,
): Promise<number> {
  const boss = await startBoss(dbUri, { supervise: false });
  try {
    for (const { task, variant, trial } of trials) {
      const job: TrialJob = { runId: run.id, task: task.name, variant: variant.label, trial };
      await boss.send(EVAL_QUEUE, job, {
        expireInSeconds: expirySec ?? task.agentTimeoutSec + task.verifierTimeoutSec + EXPIRY_MARGIN_SEC,
        retryLimit: RETRY_LIMIT,
        retryDelay: 1,
      });
    }
    return trials.length;
  } finally {
    await boss.stop({ graceful: false, wait: true });
  }
}

interface RunPlan {
  run: EvalRunRecord;
  tasks: Map<string, EvalTask>;
  variants: Map<string, Variant>;
}

export interface WorkerOptions {
  concurrency: number;
  /** How often this worker's pg-boss looks for expired jobs (seconds). */
  maintenanceSeconds: number;
  signal: AbortSignal;
}

/** Works off trials until `signal` aborts; then lets the trials in flight be retried elsewhere and stops. */
export async function runWorker(config: AgentConfig, store: Store, options: WorkerOptions): Promise<void> {
  const boss = await startBoss(config.dbUri, { supervise: true, maintenanceSeconds: options.maintenanceSeconds });
  const plans = new Map<string, Promise<RunPlan>>();
  let crow: Promise<Crow> | undefined;
  const planOf = (runId: string) => {
    let plan = plans.get(runId);
    if (!plan) {
      plan = (async () => {
        const run = await store.evals.getRun(runId);
        if (!run) throw new Error(`eval run ${runId} is not in ${store.location}`);
        const tasks = storedTasks(run);
        const variants = await storedVariants(store, run.config as unknown as StoredRunConfig);
        return {
          run,
          tasks: new Map(tasks.map((t) => [t.name, t])),
          variants: new Map(variants.map((v) => [v.label, v])),
        };
      })();
      plans.set(runId, plan);
    }
    return plan;
  };
  const work = async (job: TrialJob) => {
    const plan = await planOf(job.runId);
    const task = plan.tasks.get(job.task);
    const variant = plan.variants.get(job.variant);
    if (!task || !variant) throw new Error(`job names an unknown task or variant: ${JSON.stringify(job)}`);
    const done = await store.evals.listTrials(job.runId);
    if (done.some((t) => t.task === job.task && t.variant === job.variant && t.trial === job.trial)) return;
    if (!variant.oracle) crow ??= createCrow({ config, store });
    const outcome = await runTrial(
      { runId: job.runId, config, ...(variant.oracle ? {} : { crow: await crow }) },
      task,
      variant,
      job.trial,
      options.signal,
    );
    const recorded = await store.evals.recordTrial(outcome);
    process.stderr.write(
      `${recorded ? (outcome.passed ? "pass" : "FAIL") : "dup "} ${job.runId} ${job.task} · ${job.variant} · #${job.trial} reward ${outcome.reward}\n`,
    );
  };
  // pg-boss gives up on a handler still running at its job's expiry (fails the job, to be retried, and fetches the
  // next) but cannot stop it: a retry of a trial this worker still runs waits for that run instead of starting it
  // again (a second run would ask the model again, and its record would be dropped as a duplicate anyway).
  const inFlight = new Map<string, Promise<void>>();
  const once = (job: TrialJob): Promise<void> => {
    const key = JSON.stringify([job.runId, job.task, job.variant, job.trial]);
    let running = inFlight.get(key);
    if (!running) {
      running = work(job).finally(() => inFlight.delete(key));
      inFlight.set(key, running);
    }
    return running;
  };
  for (let i = 0; i < options.concurrency; i++) {
    await boss.work<TrialJob>(EVAL_QUEUE, { batchSize: 1, pollingIntervalSeconds: 1 }, async ([job]) => {
      if (!job) return;
      try {
        await once(job.data);
      } catch (error) {
        // Thrown: pg-boss fails the job, and retries it (up to its limit) on whichever worker fetches it next.
        if (!(error instanceof TrialInterrupted)) log.warn(`eval trial ${JSON.stringify(job.data)} failed`, error);
        throw error;
      }
    });
  }
  process.stderr.write(
    `crow eval worker: working off ${EVAL_QUEUE} on ${store.location} (${options.concurrency} at a time); Ctrl-C stops\n`,
  );
  await new Promise<void>((resolve) => {
    if (options.signal.aborted) resolve();
    options.signal.addEventListener("abort", () => resolve(), { once: true });
  });
  await boss.stop({ graceful: true, wait: true, timeout: 30_000 });
  if (crow) await (await crow).close();
}
