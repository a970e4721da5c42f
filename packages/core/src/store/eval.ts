/**
 * The records of `crow eval`: runs and their finished trials, in the same database as the sessions (each trial's
 * session is an ordinary session). A trial is keyed by (run, task, variant, trial index) and recorded at most once:
 * a second record of the same trial (a resumed run, a queue job retried after its worker died) is ignored.
 */
import type { Kysely, Selectable } from "kysely";
import { errorText } from "../error-text.js";
import type { EvalRunRecord, EvalStore, EvalTrialDetails, EvalTrialRecord } from "./eval-types.js";
import type { Database, EvalRunsTable, EvalTrialsTable } from "./schema.js";
import { StoreError } from "./types.js";

function toRun(row: Selectable<EvalRunsTable>): EvalRunRecord {
  return {
    id: row.id,
    name: row.name,
    suite: row.suite,
    config: JSON.parse(row.config) as Record<string, unknown>,
    createdAt: row.created_at,
  };
}

function toTrial(row: Selectable<EvalTrialsTable>): EvalTrialRecord {
  return {
    runId: row.run_id,
    task: row.task,
    variant: row.variant,
    trial: Number(row.trial),
    sessionId: row.session_id,
    reward: Number(row.reward),
    passed: Number(row.passed) === 1,
    stopReason: row.stop_reason,
    wallMs: Number(row.wall_ms),
    requests: Number(row.requests),
    promptTokens: Number(row.prompt_tokens),
    completionTokens: Number(row.completion_tokens),
    cachedTokens: Number(row.cached_tokens),
    cost: row.cost === null ? null : Number(row.cost),
    toolCalls: Number(row.tool_calls),
    toolErrors: Number(row.tool_errors),
    error: row.error,
    finishedAt: row.finished_at,
    details: row.details ? (JSON.parse(row.details) as EvalTrialDetails) : null,
  };
}

/** The eval records of the store whose Kysely instance is `db`. */
export function kyselyEvalStore(db: Kysely<Database>, location: string): EvalStore {
  async function guard<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      const message = errorText(error);
      throw new StoreError(`${what} failed on ${location}: ${message}`, { cause: error });
    }
  }
  return {
    createRun: (run) =>
      guard("creating an eval run", async () => {
        const row = {
          id: run.id,
          name: run.name,
          suite: run.suite,
          config: JSON.stringify(run.config),
          created_at: new Date().toISOString(),
        };
        await db.insertInto("eval_runs").values(row).execute();
        return toRun(row);
      }),
    getRun: (id) =>
      guard("reading an eval run", async () => {
        const row = await db.selectFrom("eval_runs").selectAll().where("id", "=", id).executeTakeFirst();
        return row ? toRun(row) : undefined;
      }),
    listRuns: (limit = 50) =>
      guard("listing eval runs", async () => {
        const rows = await db.selectFrom("eval_runs").selectAll().orderBy("created_at", "desc").limit(limit).execute();
        return rows.map(toRun);
      }),
    recordTrial: (trial) =>
      guard("recording an eval trial", async () => {
        const result = await db
          .insertInto("eval_trials")
          .values({
            run_id: trial.runId,
            task: trial.task,
            variant: trial.variant,
            trial: trial.trial,
            session_id: trial.sessionId,
            reward: trial.reward,
            passed: trial.passed ? 1 : 0,
            stop_reason: trial.stopReason,
            wall_ms: Math.round(trial.wallMs),
            requests: trial.requests,
            prompt_tokens: trial.promptTokens,
            completion_tokens: trial.completionTokens,
            cached_tokens: trial.cachedTokens,
            cost: trial.cost,
            tool_calls: trial.toolCalls,
            tool_errors: trial.toolErrors,
            error: trial.error,
            finished_at: new Date().toISOString(),
            details: trial.details ? JSON.stringify(trial.details) : null,
          })
          // Both dialects: INSERT … ON CONFLICT DO NOTHING (SQLite ≥ 3.24).
          .onConflict((oc) => oc.columns(["run_id", "task", "variant", "trial"]).doNothing())
          .executeTakeFirst();
        return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
      }),
    listTrials: (runId) =>
      guard("listing eval trials", async () => {
        const rows = await db
          .selectFrom("eval_trials")
          .selectAll()
          .where("run_id", "=", runId)
          .orderBy("task")
          .orderBy("variant")
          .orderBy("trial")
          .execute();
        return rows.map(toTrial);
      }),
  };
}
