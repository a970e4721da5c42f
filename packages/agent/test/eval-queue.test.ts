/**
 * `crow eval run --queue` and `crow eval worker` on a real PostgreSQL server (skipped, with the reason, only when
 * PostgreSQL is not installed): two workers, one killed with -9 mid-trial; its heartbeat stops, the other worker
 * retries its trial (without waiting for the job's expiry), no live trial is attempted twice, the dead attempt's
 * session and workspace are cleaned up, and every trial is recorded exactly once.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { openStore } from "@crow/core";
import { findPostgresBin, type MockLlm, type PostgresServer, reply, startMockLlm, startPostgres } from "@crow/testkit";
import { runEval, startEval, writeSuite } from "./eval-helpers.js";

const TASKS = ["q1", "q2", "q3", "q4"];

describe("crow eval queue on PostgreSQL", {
  skip: findPostgresBin() ? undefined : "PostgreSQL is not installed",
}, () => {
  let mock: MockLlm;
  let postgres: PostgresServer;
  let dbUri: string;
  let home: string;
  before(async () => {
    mock = await startMockLlm();
    postgres = await startPostgres();
    dbUri = await postgres.createDatabase();
    home = await mkdtemp(path.join(tmpdir(), "crow-eval-queue-"));
  });
  after(async () => {
    await mock.close();
    await postgres.stop();
    await rm(home, { recursive: true, force: true });
  });

  test("a worker killed mid-trial loses nothing: its trial is retried and each trial is recorded once", async () => {
    const suite = writeSuite(
      path.join(home, "suite"),
      Object.fromEntries(TASKS.map((name) => [name, { check: "true" }])),
    );
    const options = { mockUrl: mock.url, home, env: { CROW_DB_URI: dbUri } };
    // No --job-expiry: the job's expiry is the task's full time (10 minutes here); the heartbeat finds the dead worker.
    const enqueued = await runEval(["run", suite, "--queue", "--json"], options);
    assert.equal(enqueued.code, 0, enqueued.stderr);
    const { runId, trials } = JSON.parse(enqueued.stdout) as { runId: string; trials: number };
    assert.equal(trials, 4);

    // Worker A takes the first trial and never gets an answer; B takes the others; then A is killed, and B takes its
    // trial once A's heartbeat has gone silent.
    mock.script(reply().hang());
    const worker = ["worker", "--maintenance-seconds", "1", "--lease-seconds", "8"];
    const workerA = startEval(worker, options);
    await mock.waitForRequests(1);
    for (const _ of TASKS) mock.script(reply().text("Done."));
    const workerB = startEval(worker, options);
    await mock.waitForRequests(2);
    workerA.child.kill("SIGKILL");
    assert.equal((await workerA.done).signal, "SIGKILL");

    // Whatever host asks, the status comes from the store; wait for the expired trial to be done by B.
    interface Status {
      done: number;
      total: number;
      attempts: number;
      retried: number;
      abandoned: number;
      duplicates: number;
      attemptList: Array<{ task: string; attempt: number; state: string }>;
    }
    let status = { done: 0, total: 0 } as Status;
    for (let polls = 0; status.done < 4; polls++) {
      assert.ok(polls < 600, `the run never completed: ${JSON.stringify(status)}\n${workerB.output()}`);
      await sleep(300);
      status = JSON.parse((await runEval(["status", runId, "--json"], options)).stdout) as typeof status;
    }
    workerB.child.kill("SIGTERM");
    const stoppedB = await workerB.done;
    assert.equal(stoppedB.code, 0, stoppedB.stderr);
    assert.equal(status.total, 4);
    // One attempt per live trial; the dead worker's trial twice: abandoned, then done. No duplicate.
    assert.equal(status.attempts, 5, JSON.stringify(status.attemptList));
    assert.equal(status.abandoned, 1);
    assert.equal(status.retried, 1);
    assert.equal(status.duplicates, 0);
    const retried = status.attemptList.filter((a) => a.attempt === 2);
    assert.deepEqual(
      status.attemptList.filter((a) => a.task === retried[0]?.task).map((a) => a.state),
      ["abandoned", "done"],
    );
    mock.assertDone();

    const store = await openStore(dbUri);
    try {
      const recorded = await store.evals.listTrials(runId);
      assert.deepEqual(
        recorded.map((t) => `${t.task}#${t.trial}:${t.passed}`),
        ["q1#0:true", "q2#0:true", "q3#0:true", "q4#0:true"],
      );
      // Only recorded trials have sessions titled as trials; the dead attempt's session says what it was.
      const { sessions } = await store.listSessions({ limit: 100 });
      const titled = sessions.filter((s) => s.title?.startsWith(`eval ${runId} `));
      assert.deepEqual(titled.map((s) => s.id).sort(), recorded.map((t) => t.sessionId).sort());
      assert.ok(
        sessions.some(
          (s) => s.title === `abandoned attempt 1 of eval ${runId} ${retried[0]?.task} mock-model #0 (not recorded)`,
        ),
        sessions.map((s) => s.title).join("\n"),
      );
    } finally {
      await store.close();
    }
  });

  test("--queue on a SQLite store is refused with what to do", async () => {
    const suite = path.join(home, "suite");
    const refused = await runEval(["run", suite, "--queue"], { mockUrl: mock.url, home });
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /the eval queue needs a PostgreSQL store: set db_uri/);
    const worker = await runEval(["worker"], { mockUrl: mock.url, home });
    assert.equal(worker.code, 2);
    assert.match(worker.stderr, /needs a PostgreSQL store/);
  });
});
