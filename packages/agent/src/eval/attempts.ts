/**
 * The attempts of queued trials, with a heartbeat: a worker writes a row when it starts a trial's job and touches it
 * every few seconds while the trial runs. Any worker's reaper fails (so pg-boss retries it at once) the job of an
 * attempt whose heartbeat stopped — its worker died — instead of waiting for the job's expiry (the task's timeouts),
 * and never touches a live one: the job's own expiry stays the trial's full time, so a slow trial gets no second
 * attempt. The reaper also retitles the dead attempt's session (it is no trial) and, on the same host, removes its
 * workspace. The table lives in the store's PostgreSQL database next to pg-boss's schema.
 */
import { rmSync } from "node:fs";
import { hostname } from "node:os";
import type { Store } from "@crow/core";
import type PgBoss from "pg-boss";
import { log } from "../base/log.js";

const TABLE = "crow_eval_attempts";

/** How often a running attempt touches its row, relative to the lease (a few beats may be missed under load). */
const BEATS_PER_LEASE = 4;

export interface AttemptRow {
  job_id: string;
  run_id: string;
  task: string;
  variant: string;
  trial: number;
  worker: string;
  host: string;
  attempt: number;
  state: "running" | "done" | "duplicate" | "abandoned";
  session_id: string | null;
  workspace: string | null;
}

/** Creates the attempts table if this database has none. */
export async function ensureAttemptsTable(db: PgBoss.Db): Promise<void> {
  await db.executeSql(
    `CREATE TABLE IF NOT EXISTS ${TABLE} (
      job_id text NOT NULL, run_id text NOT NULL, task text NOT NULL, variant text NOT NULL, trial integer NOT NULL,
      worker text NOT NULL, host text NOT NULL, attempt integer NOT NULL, state text NOT NULL,
      session_id text, workspace text, started_at timestamptz NOT NULL DEFAULT now(),
      heartbeat_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (job_id, attempt))`,
    [],
  );
}

/** This worker's name in the attempts (host and pid). */
export const WORKER_NAME = `${hostname()}:${process.pid}`;

/** One running attempt: its heartbeat, what it started (for the reaper), and how it ended. */
export class Attempt {
  private readonly timer: NodeJS.Timeout;
  constructor(
    private readonly db: PgBoss.Db,
    private readonly jobId: string,
    private readonly attempt: number,
    leaseSeconds: number,
  ) {
    this.timer = setInterval(() => void this.beat(), (leaseSeconds * 1000) / BEATS_PER_LEASE);
    this.timer.unref();
  }

  static async start(
    db: PgBoss.Db,
    job: { id: string; retryCount: number; data: { runId: string; task: string; variant: string; trial: number } },
    leaseSeconds: number,
  ): Promise<Attempt> {
    const { runId, task, variant, trial } = job.data;
    await db.executeSql(
      `INSERT INTO ${TABLE} (job_id, run_id, task, variant, trial, worker, host, attempt, state)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'running')
       ON CONFLICT (job_id, attempt) DO UPDATE SET worker = $6, host = $7, state = 'running', session_id = NULL,
         workspace = NULL, started_at = now(), heartbeat_at = now()`,
      [job.id, runId, task, variant, trial, WORKER_NAME, hostname(), job.retryCount + 1],
    );
    return new Attempt(db, job.id, job.retryCount + 1, leaseSeconds);
  }

  private async beat(): Promise<void> {
    try {
      await this.db.executeSql(
        `UPDATE ${TABLE} SET heartbeat_at = now() WHERE job_id = $1 AND attempt = $2 AND state = 'running'`,
        [this.jobId, this.attempt],
      );
    } catch (error) {
      log.warn("eval attempt heartbeat failed", error);
    }
  }

  /** What the reaper cleans up should this worker die: the trial's workspace and its session. */
  async started(what: { workspace?: string; sessionId?: string }): Promise<void> {
    const where = "WHERE job_id = $1 AND attempt = $2";
    if (what.workspace) {
      await this.db.executeSql(`UPDATE ${TABLE} SET workspace = $3 ${where}`, [
        this.jobId,
        this.attempt,
        what.workspace,
      ]);
    }
    if (what.sessionId) {
      await this.db.executeSql(`UPDATE ${TABLE} SET session_id = $3 ${where}`, [
        this.jobId,
        this.attempt,
        what.sessionId,
      ]);
    }
  }

  async end(state: "done" | "duplicate" | "abandoned"): Promise<void> {
    clearInterval(this.timer);
    await this.db.executeSql(`UPDATE ${TABLE} SET state = $3 WHERE job_id = $1 AND attempt = $2`, [
      this.jobId,
      this.attempt,
      state,
    ]);
  }
}

/**
 * Fails the jobs of attempts whose heartbeat is older than `leaseSeconds` (pg-boss then retries them, on any
 * worker), retitles their sessions and removes their workspaces on this host. Resolves to how many it reaped.
 */
export async function reapDeadAttempts(
  boss: PgBoss,
  store: Store,
  queue: string,
  leaseSeconds: number,
): Promise<number> {
  const db = boss.getDb();
  const { rows } = await db.executeSql(
    `UPDATE ${TABLE} SET state = 'abandoned' WHERE state = 'running' AND heartbeat_at < now() - make_interval(secs => $1)
     RETURNING job_id, run_id, task, variant, trial, worker, host, attempt, session_id, workspace`,
    [leaseSeconds],
  );
  for (const row of rows as AttemptRow[]) {
    process.stderr.write(
      `crow eval worker: ${row.worker} stopped beating on ${row.run_id} ${row.task} · ${row.variant} · #${row.trial} (attempt ${row.attempt}): retrying it\n`,
    );
    await boss.fail(queue, row.job_id, { message: `worker ${row.worker} died (no heartbeat for ${leaseSeconds}s)` });
    await markAbandoned(store, row);
    if (row.workspace && row.host === hostname()) rmSync(row.workspace, { recursive: true, force: true });
  }
  return rows.length;
}

/** The session of an attempt that was not recorded keeps a title that says so (never `eval RUN TASK VARIANT #N`). */
export async function markAbandoned(
  store: Store,
  row: Pick<AttemptRow, "session_id" | "run_id" | "task" | "variant" | "trial" | "attempt">,
  why = "abandoned",
): Promise<void> {
  if (!row.session_id) return;
  await store
    .updateSession(row.session_id, {
      title: `${why} attempt ${row.attempt} of eval ${row.run_id} ${row.task} ${row.variant} #${row.trial} (not recorded)`,
    })
    .catch(() => undefined);
}
