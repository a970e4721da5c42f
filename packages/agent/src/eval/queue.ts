/**
 * Many machines: with a PostgreSQL store, `crow eval run --queue` puts one pg-boss job per missing trial on that
 * database, and `crow eval worker` processes on any hosts work them off (each with its own runtime: one toolserver,
 * many sessions). A running trial beats a heartbeat (attempts.ts): when its worker dies, another worker's reaper fails
 * its job within the lease and pg-boss retries it; a live trial is never retried (its job's expiry is the trial's full
 * time). A trial is recorded once whatever happens (the store ignores a second record), and a worker skips a trial it
 * finds recorded already.
 *
 * Why pg-boss 10: it runs on the Node versions Crow supports (≥ 20; pg-boss 12 needs Node ≥ 22.12, graphile-worker
 * 0.18 needs ≥ 22.18), needs nothing but the PostgreSQL the store already uses, and gives expiry with retries.
 */
import type { Crow, EvalRunRecord, Store } from "@crow/core";
import type PgBoss from "pg-boss";
import { log } from "../base/log.js";
import type { AgentConfig } from "../config/index.js";
import { createCrow } from "../sdk/create-crow.js";
import {
  Attempt,
  type AttemptRow,
  ensureAttemptsTable,
  markAbandoned,
  reapDeadAttempts,
  WORKER_NAME,
} from "./attempts.js";
import type { TrialKey } from "./runner.js";
import { storedRunConfig, storedTasks, storedVariants } from "./stored-run.js";
import type { EvalTask } from "./suite.js";
import { runTrial, TrialInterrupted } from "./trial.js";
import { evalConfig } from "./trial-sandbox.js";
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
        // The trial's whole time: pg-boss also cuts its handler at this point. A dead worker is found by its
        // heartbeat long before (attempts.ts).
        expireInSeconds:
          expirySec ??
          task.agentTimeoutSec + task.verifierTimeoutSec + (task.docker ? task.buildTimeoutSec : 0) + EXPIRY_MARGIN_SEC,
        retryLimit: RETRY_LIMIT,
        retryDelay: 1,
      });
    }
    return trials.length;
  } finally {
    await boss.stop({ graceful: false, wait: true });
  }
}

/** The attempts of `runId`'s queued trials (for `crow eval status`): every start, retry, duplicate and death. */
export async function listAttempts(dbUri: string, runId: string): Promise<AttemptRow[]> {
  const boss = await startBoss(dbUri, { supervise: false });
  try {
    await ensureAttemptsTable(boss.getDb());
    const { rows } = await boss
      .getDb()
      .executeSql(
        "SELECT job_id, run_id, task, variant, trial, worker, host, attempt, state, session_id, workspace FROM crow_eval_attempts WHERE run_id = $1 ORDER BY task, variant, trial, attempt",
        [runId],
      );
    return rows as AttemptRow[];
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
  /** A running trial's heartbeat lease: a trial whose worker has not beaten for this long is retried elsewhere. */
  leaseSeconds: number;
  /** How often this worker's pg-boss looks for expired jobs (seconds). */
  maintenanceSeconds: number;
  signal: AbortSignal;
}

/** Works off trials until `signal` aborts; then lets the trials in flight be retried elsewhere and stops. */
export async function runWorker(agentConfig: AgentConfig, store: Store, options: WorkerOptions): Promise<void> {
  const config = evalConfig(agentConfig);
  const boss = await startBoss(config.dbUri, { supervise: true, maintenanceSeconds: options.maintenanceSeconds });
  const runner = new TrialRunner(config, store, options.signal);
  const db = boss.getDb();
  await ensureAttemptsTable(db);
  for (let i = 0; i < options.concurrency; i++) {
    await boss.work<TrialJob>(
      EVAL_QUEUE,
      { batchSize: 1, pollingIntervalSeconds: 1, includeMetadata: true },
      async ([job]) => {
        if (job) await attemptJob(db, job, runner, options.leaseSeconds);
      },
    );
  }
  // Any worker looks for attempts whose worker died, as often as pg-boss's own maintenance runs.
  const reaper = setInterval(() => {
    reapDeadAttempts(boss, store, EVAL_QUEUE, options.leaseSeconds).catch((error) =>
      log.warn("eval queue: looking for dead attempts failed", error),
    );
  }, options.maintenanceSeconds * 1000);
  process.stderr.write(
    `crow eval worker: working off ${EVAL_QUEUE} on ${store.location} (${options.concurrency} at a time); Ctrl-C stops\n`,
  );
  await new Promise<void>((resolve) => {
    if (options.signal.aborted) resolve();
    options.signal.addEventListener("abort", () => resolve(), { once: true });
  });
  clearInterval(reaper);
  await boss.stop({ graceful: true, wait: true, timeout: 30_000 });
  await runner.close();
}

/**
 * One fetched job: records the attempt (with its heartbeat) and runs the trial. When that fails the attempt is ended
 * "abandoned" and the error thrown, so pg-boss fails the job and retries it (up to its limit) on whichever worker
 * fetches it next.
 */
async function attemptJob(
  db: PgBoss.Db,
  job: PgBoss.JobWithMetadata<TrialJob>,
  runner: TrialRunner,
  leaseSeconds: number,
): Promise<void> {
  const attempt = await Attempt.start(db, job, leaseSeconds);
  try {
    await runner.run(job.data, attempt, job.retryCount + 1);
  } catch (error) {
    await attempt.end("abandoned").catch(() => undefined);
    if (!(error instanceof TrialInterrupted)) log.warn(`eval trial ${JSON.stringify(job.data)} failed`, error);
    throw error;
  }
}

/**
 * Runs the trials of one worker's jobs: reads each run's plan from the store once, and starts the runtime (one
 * toolserver, many sessions) when a trial first needs an agent.
 */
class TrialRunner {
  private readonly plans = new Map<string, Promise<RunPlan>>();
  private crow: Promise<Crow> | undefined;

  constructor(
    private readonly config: AgentConfig,
    private readonly store: Store,
    private readonly signal: AbortSignal,
  ) {}

  /**
   * Runs `job`'s trial unless it is recorded already, records it, ends `attempt` ("done", or "duplicate" when another
   * worker recorded it first) and prints a line on stderr. Throws when the job names an unknown run, task or variant,
   * or when the trial could not finish (`TrialInterrupted` when `signal` aborted it).
   */
  async run(job: TrialJob, attempt: Attempt, attemptNumber: number): Promise<void> {
    const { store, config } = this;
    const plan = await this.plan(job.runId);
    const task = plan.tasks.get(job.task);
    const variant = plan.variants.get(job.variant);
    if (!task || !variant) throw new Error(`job names an unknown task or variant: ${JSON.stringify(job)}`);
    const done = await store.evals.listTrials(job.runId);
    if (done.some((t) => t.task === job.task && t.variant === job.variant && t.trial === job.trial)) return;
    if (!variant.oracle) this.crow ??= createCrow({ config, store });
    const outcome = await runTrial(
      {
        runId: job.runId,
        config,
        ...(variant.oracle ? {} : { crow: await this.crow }),
        onStarted: (what) => attempt.started(what),
      },
      task,
      variant,
      job.trial,
      this.signal,
    );
    outcome.details = { ...outcome.details, attempt: { worker: WORKER_NAME, number: attemptNumber } };
    const recorded = await store.evals.recordTrial(outcome);
    await attempt.end(recorded ? "done" : "duplicate");
    if (!recorded && outcome.sessionId) {
      await markAbandoned(
        store,
        { ...job, run_id: job.runId, session_id: outcome.sessionId, attempt: attemptNumber },
        "duplicate",
      );
    }
    process.stderr.write(
      `${recorded ? (outcome.passed ? "pass" : "FAIL") : "dup "} ${job.runId} ${job.task} · ${job.variant} · #${job.trial} reward ${outcome.reward}\n`,
    );
  }

  /** Closes the runtime, if a trial started one. */
  async close(): Promise<void> {
    if (this.crow) await (await this.crow).close();
  }

  /** The plan of `runId`, read once; rejects when the run is not in the store. */
  private plan(runId: string): Promise<RunPlan> {
    let plan = this.plans.get(runId);
    if (!plan) {
      plan = readPlan(this.store, runId);
      this.plans.set(runId, plan);
    }
    return plan;
  }
}

/** A stored run's tasks and variants by name. */
async function readPlan(store: Store, runId: string): Promise<RunPlan> {
  const run = await store.evals.getRun(runId);
  if (!run) throw new Error(`eval run ${runId} is not in ${store.location}`);
  const tasks = storedTasks(run);
  const variants = await storedVariants(store, storedRunConfig(run));
  return {
    run,
    tasks: new Map(tasks.map((t) => [t.name, t])),
    variants: new Map(variants.map((v) => [v.label, v])),
  };
}
