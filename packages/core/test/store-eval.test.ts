/**
 * `Store.evals` (crow eval's runs and trials) on a SQLite file and on a real PostgreSQL server (skipped, with the
 * reason, only when PostgreSQL is not installed): a trial is recorded once, whoever records it again.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type EvalTrialRecord, openStore, type Store } from "@crow/core";
import { storeBackends } from "./store-backends.js";

function trial(task: string, index: number, reward: number): Omit<EvalTrialRecord, "finishedAt"> {
  return {
    runId: "eval-1",
    task,
    variant: "mock-model+system_prompt@2",
    trial: index,
    sessionId: `s-${task}-${index}`,
    reward,
    passed: reward >= 1,
    stopReason: "end_turn",
    wallMs: 1234.6,
    requests: 3,
    promptTokens: 900,
    completionTokens: 80,
    cachedTokens: 300,
    cost: 0.0125,
    toolCalls: 2,
    toolErrors: 1,
    error: reward >= 1 ? null : "verifier wrote no reward",
    details:
      reward >= 1
        ? {
            rewards: { correct: 1, style: 1 },
            phaseMs: { setup: 5, agent: 1000, verifier: 200 },
            verifierOutput: "ok\n",
          }
        : null,
  };
}

for (const backend of storeBackends("crow-eval-store")) {
  describe(`eval records on ${backend.name}`, { skip: backend.skip }, () => {
    let store: Store;
    before(async () => {
      store = await openStore(await backend.create());
    });
    after(async () => {
      await store?.close();
      await backend.cleanup();
    });

    test("a run and its trials read back as written", async () => {
      await store.evals.createRun({ id: "eval-1", name: "nightly", suite: "/suites/a", config: { trials: 2 } });
      assert.equal(await store.evals.recordTrial(trial("b", 0, 0.5)), true);
      assert.equal(await store.evals.recordTrial(trial("a", 1, 1)), true);
      assert.equal(await store.evals.recordTrial(trial("a", 0, 0)), true);
      const run = await store.evals.getRun("eval-1");
      assert.deepEqual(run?.config, { trials: 2 });
      assert.equal(run?.name, "nightly");
      const trials = await store.evals.listTrials("eval-1");
      assert.deepEqual(
        trials.map((t) => [t.task, t.trial, t.reward, t.passed]),
        [
          ["a", 0, 0, false],
          ["a", 1, 1, true],
          ["b", 0, 0.5, false],
        ],
      );
      const { finishedAt, ...rest } = trials[1] as EvalTrialRecord;
      assert.deepEqual(rest, { ...trial("a", 1, 1), wallMs: 1235 });
      assert.ok(finishedAt);
      assert.deepEqual(
        (await store.evals.listRuns()).map((r) => r.id),
        ["eval-1"],
      );
    });

    test("recording a trial again (a resumed run, a retried job) changes nothing", async () => {
      assert.equal(await store.evals.recordTrial({ ...trial("a", 1, 0), error: "second attempt" }), false);
      const again = await Promise.all([
        store.evals.recordTrial(trial("c", 0, 1)),
        store.evals.recordTrial(trial("c", 0, 0)),
      ]);
      assert.deepEqual(again.sort(), [false, true]);
      const trials = await store.evals.listTrials("eval-1");
      assert.equal(trials.length, 4);
      assert.equal(trials.find((t) => t.task === "a" && t.trial === 1)?.reward, 1);
    });
  });
}
