/**
 * `crow eval` as close to Harbor's container as a trial without Docker gets, through the built binary with small
 * tasks made here: a writable /tests for each verifier run, the setup's output kept whole (its early cause too) and
 * shown by `report --trial`.
 */
import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { openStore } from "@crow/core";
import { type MockLlm, startMockLlm } from "@crow/testkit";
import { runEval, runIdOf } from "./eval-helpers.js";

async function files(dir: string, content: Record<string, string>): Promise<void> {
  for (const [file, text] of Object.entries(content)) {
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await writeFile(path.join(dir, file), text);
  }
}

describe("crow eval: Harbor's container, without Docker", () => {
  let mock: MockLlm;
  let home: string;
  let suites: string;
  before(async () => {
    mock = await startMockLlm();
    home = await mkdtemp(path.join(tmpdir(), "crow-eval-home-"));
    suites = await mkdtemp("/var/tmp/crow-eval-suites-");
  });
  after(async () => {
    await mock.close();
    await rm(home, { recursive: true, force: true });
    await rm(suites, { recursive: true, force: true });
  });

  test("the verifier gets a writable /tests of its own each run; the task's tests/ is never changed", async () => {
    const suite = path.join(suites, "tests-writable");
    const task = path.join(suite, "builds-in-tests");
    await files(task, {
      "instruction.md": "Nothing.\n",
      // As feal-differential-cryptanalysis does: build into /tests; a leftover of an earlier run would fail it.
      "tests/test.sh": `#!/bin/bash
[ -e /tests/build ] && { echo "leftover from an earlier run"; echo 0 > /logs/verifier/reward.txt; exit 0; }
mkdir /tests/build && cp /tests/input.txt /tests/build/ && echo changed >> /tests/input.txt || exit 1
[ -x /tests/helper.sh ] && [ "$(/tests/helper.sh)" = ok ] && echo 1 > /logs/verifier/reward.txt
`,
      "tests/input.txt": "input\n",
      "tests/helper.sh": "#!/bin/sh\necho ok\n",
      "solution/solve.sh": "true\n",
    });
    await chmod(path.join(task, "tests", "helper.sh"), 0o755);
    const result = await runEval(["run", suite, "--oracle", "--trials", "2", "--json"], { mockUrl: mock.url, home });
    assert.equal(result.code, 0, `${result.stdout}\n${result.stderr}`);
    assert.equal(result.stdout.match(/"passed":true/g)?.length, 2, result.stdout);
    assert.deepEqual(readdirSync(path.join(task, "tests")).sort(), ["helper.sh", "input.txt", "test.sh"]);
  });

  test("the setup's output is kept whole, its early cause too, and report --trial shows it", async () => {
    const suite = path.join(suites, "setup-output");
    await files(path.join(suite, "fails-early"), {
      "instruction.md": "Nothing.\n",
      "environment/Dockerfile":
        "FROM ubuntu:24.04\nWORKDIR /app\nRUN echo 'fatal: repository not found (the real cause)' >&2 && seq 1 30000 && false\n",
      "tests/test.sh": "echo 1 > /logs/verifier/reward.txt\n",
      "solution/solve.sh": "true\n",
    });
    await files(path.join(suite, "prints"), {
      "instruction.md": "Nothing.\n",
      "environment/Dockerfile": "FROM ubuntu:24.04\nWORKDIR /app\nRUN echo built by the setup\n",
      "tests/test.sh": "echo 1 > /logs/verifier/reward.txt\n",
      "solution/solve.sh": "echo from the solution\n",
    });
    const result = await runEval(["run", suite, "--oracle"], { mockUrl: mock.url, home });
    assert.equal(result.code, 1, `${result.stdout}\n${result.stderr}`);
    const runId = runIdOf(result.stdout);
    const store = await openStore(path.join(home, "crow.db"));
    try {
      const trials = await store.evals.listTrials(runId);
      const failed = trials.find((t) => t.task === "fails-early");
      const setup = failed?.details?.setupOutput ?? "";
      assert.match(setup, /fatal: repository not found \(the real cause\)/);
      assert.match(setup, /^30000$/m, "and its end");
      assert.match(setup, /^12345$/m, "30 000 lines fit whole");
      assert.match(failed?.error ?? "", /^setup: Dockerfile RUN .* exited with 1/);
      const printed = trials.find((t) => t.task === "prints");
      assert.match(printed?.details?.setupOutput ?? "", /built by the setup/);
      assert.match(printed?.details?.solverOutput ?? "", /from the solution/);
    } finally {
      await store.close();
    }
    const report = await runEval(["report", runId, "--trial", "fails-early#0"], { mockUrl: mock.url, home });
    assert.equal(report.code, 0, report.stderr);
    assert.match(
      report.stdout,
      /setup output \(the Dockerfile's steps\):\n```\n\$ RUN echo 'fatal[^\n]*\nfatal: repository/,
    );
  });
});
