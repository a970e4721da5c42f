/**
 * `crow eval run --resume RUN` after the run was killed (-9) or stopped with Ctrl-C (SIGINT): only the missing trials
 * run, and every trial ends up recorded exactly once.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { openStore } from "@crow/core";
import { type MockLlm, reply, startMockLlm } from "@crow/testkit";
import { runEval, runIdOf, startEval, writeSuite } from "./eval-helpers.js";

const TASKS = ["t1", "t2", "t3", "t4"];

describe("crow eval run --resume", () => {
  let mock: MockLlm;
  let home: string;
  let suite: string;
  before(async () => {
    mock = await startMockLlm();
    home = await mkdtemp(path.join(tmpdir(), "crow-eval-resume-"));
    suite = writeSuite(path.join(home, "suite"), Object.fromEntries(TASKS.map((name) => [name, { check: "true" }])));
  });
  after(async () => {
    await mock.close();
    await rm(home, { recursive: true, force: true });
  });

  /** The recorded (task, trial) keys of a run. */
  async function recorded(runId: string): Promise<string[]> {
    const store = await openStore(path.join(home, "crow.db"));
    try {
      return (await store.evals.listTrials(runId)).map((t) => `${t.task}#${t.trial}`);
    } finally {
      await store.close();
    }
  }

  for (const [how, signal] of [
    ["kill -9", "SIGKILL"],
    ["Ctrl-C", "SIGINT"],
  ] as const) {
    test(`after ${how} mid-trial, --resume runs only what is missing and nothing twice`, async () => {
      const base = mock.requests.length;
      // t1 finishes; t2's first request never gets an answer, so the run is stopped in the middle of t2.
      mock.script(reply().text("Done."), reply().hang());
      const running = startEval(["run", suite, "--json"], { mockUrl: mock.url, home });
      await mock.waitForRequests(base + 2);
      const runId = runIdOf(running.output());
      running.child.kill(signal);
      const stopped = await running.done;
      if (signal === "SIGINT") {
        assert.equal(stopped.code, 130, stopped.stderr);
        assert.match(stopped.stderr, new RegExp(`crow eval run --resume ${runId}`));
        assert.match(stopped.stdout, /"type":"end".*"interrupted":true/);
      } else assert.equal(stopped.signal, "SIGKILL");
      assert.deepEqual(await recorded(runId), ["t1#0"]);

      mock.script(reply().text("Done."), reply().text("Done."), reply().text("Done."));
      const resumed = await runEval(["run", "--resume", runId], { mockUrl: mock.url, home });
      assert.equal(resumed.code, 0, resumed.stderr);
      assert.match(resumed.stderr, /3 trial\(s\) to run, 1 done before/);
      mock.assertDone();
      assert.deepEqual(await recorded(runId), ["t1#0", "t2#0", "t3#0", "t4#0"]);
      const status = await runEval(["status", runId], { mockUrl: mock.url, home });
      assert.match(status.stdout, /4\/4 trials recorded, 4 passed, 0 left/);
    });
  }

  test("a run whose stored settings are damaged is refused, naming the run, by --resume and status", async () => {
    const store = await openStore(path.join(home, "crow.db"));
    const id = "eval-20000101-000000-dead";
    try {
      // As a hand-edited row (or another version's) could hold: trials is not a count.
      await store.evals.createRun({ id, name: null, suite, config: { tasks: ["t1"], variants: [], trials: "2" } });
    } finally {
      await store.close();
    }
    for (const args of [
      ["run", "--resume", id],
      ["status", id],
    ]) {
      const result = await runEval(args, { mockUrl: mock.url, home });
      assert.equal(result.code, 2, result.stderr);
      assert.match(result.stderr, new RegExp(`run ${id}: its stored settings are damaged`));
    }
  });
});
