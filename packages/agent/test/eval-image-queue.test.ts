/**
 * `crow eval worker` building a queued task's image in the trial's setup (no run-start build there), on a real
 * PostgreSQL store: two workers take a trial each at once; one builds the image, the other waits on the key's lock
 * and takes the finished entry from the cache — one entry, no half-built one, both trials passing. As root (CI).
 */
import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { openStore } from "@crow/core";
import { findPostgresBin, type MockLlm, type PostgresServer, startMockLlm, startPostgres } from "@crow/testkit";
import { runEval, startEval } from "./eval-helpers.js";
import { imageTask, probeDeb } from "./eval-image-helpers.js";

const skip =
  process.getuid?.() !== 0
    ? "building images needs root"
    : findPostgresBin()
      ? undefined
      : "PostgreSQL is not installed";

describe("crow eval worker builds a queued task's image", { skip }, () => {
  let mock: MockLlm;
  let postgres: PostgresServer;
  let dbUri: string;
  let home: string;
  before(async () => {
    mock = await startMockLlm();
    postgres = await startPostgres();
    dbUri = await postgres.createDatabase();
    home = await mkdtemp(path.join(tmpdir(), "crow-eval-image-queue-"));
  });
  after(async () => {
    await mock.close();
    await postgres.stop();
    await rm(home, { recursive: true, force: true });
  });

  test("two workers, two trials: one builds, the other waits for the lock and takes the cache", async () => {
    const probe = `crow-probe-queue-${process.pid}`;
    const deb = probeDeb(home, probe);
    const suite = path.join(home, "suite");
    await imageTask(path.join(suite, "deb"), {
      // The sleep keeps the build going while the second worker takes its trial.
      dockerfile: `FROM ubuntu:24.04\nWORKDIR /app\nCOPY ${probe}.deb /app/\nRUN apt-get install -y ./${probe}.deb && sleep 3\n`,
      environment: { [`${probe}.deb`]: { copy: deb } },
      check: `grep -qx probed /usr/share/${probe}/hello.txt`,
    });
    const options = { mockUrl: mock.url, home, env: { CROW_DB_URI: dbUri } };
    const enqueued = await runEval(["run", suite, "--queue", "--oracle", "--trials", "2", "--json"], options);
    assert.equal(enqueued.code, 0, enqueued.stderr);
    const { runId } = JSON.parse(enqueued.stdout) as { runId: string };
    const workers = [startEval(["worker"], options), startEval(["worker"], options)];
    let done = 0;
    for (let polls = 0; done < 2; polls++) {
      assert.ok(polls < 600, `the run never completed\n${workers.map((w) => w.output()).join("\n")}`);
      await sleep(300);
      done = (JSON.parse((await runEval(["status", runId, "--json"], options)).stdout) as { done: number }).done;
    }
    for (const worker of workers) worker.child.kill("SIGTERM");
    for (const worker of workers) assert.equal((await worker.done).code, 0);

    const store = await openStore(dbUri);
    try {
      const trials = await store.evals.listTrials(runId);
      assert.deepEqual(
        trials.map((t) => t.passed),
        [true, true],
        JSON.stringify(trials.map((t) => t.error)),
      );
      const notes = trials.map((t) => t.details?.emulated?.find((line) => /^image [0-9a-f]{12}: /.test(line)) ?? "");
      const keys = new Set(notes.map((note) => note.slice(6, 18)));
      assert.equal(keys.size, 1, notes.join("\n"));
      const byWorker = new Set(trials.map((t) => t.details?.attempt?.worker));
      if (byWorker.size === 2) {
        assert.deepEqual(notes.map((note) => /built by this run/.test(note)).sort(), [false, true], notes.join("\n"));
        assert.ok(
          notes.some((note) => /from the cache/.test(note)),
          notes.join("\n"),
        );
      }
    } finally {
      await store.close();
    }
    const entries = readdirSync(path.join(home, "cache", "images")).filter((name) => !name.startsWith(".mnt"));
    assert.equal(entries.filter((name) => /^[0-9a-f]{32}$/.test(name)).length, 1, entries.join(" "));
    assert.deepEqual(
      entries.filter((name) => name.startsWith(".build-")),
      [],
    );
  });
});
