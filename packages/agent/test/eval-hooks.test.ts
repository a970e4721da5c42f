/**
 * Harbor's hooks and its separate verifier environment in `crow eval`, through the built binary with small tasks made
 * here: a step's `workdir/` copied in and its `setup.sh` run before the step (a failing one ends the trial), collect
 * hooks after the agent's part, and `[verifier] environment_mode = "separate"`: the verifier in a fresh workspace
 * that holds the agent's artifacts and nothing else it left.
 */
import assert from "node:assert/strict";
import { existsSync, readdirSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { type MockLlm, startMockLlm } from "@crow/testkit";
import { files, REWARD_IF, runEval, runIdOf, trialOf } from "./eval-helpers.js";

interface Trial {
  reward: number;
  passed: boolean;
  error: string | null;
  details?: {
    steps?: { name: string; reward: number; error: string | null; stopped?: string; hookOutput?: string }[];
    hookOutput?: string;
    verifierOutput?: string;
  };
}

describe("crow eval: Harbor's step hooks, collect hooks and separate verifier", () => {
  let mock: MockLlm;
  let home: string;
  let suites: string;
  let outside: string;
  before(async () => {
    mock = await startMockLlm();
    home = await mkdtemp(path.join(tmpdir(), "crow-eval-home-"));
    suites = await mkdtemp("/var/tmp/crow-eval-suites-");
    outside = await mkdtemp("/var/tmp/crow-eval-outside-");
  });
  after(async () => {
    await mock.close();
    await rm(home, { recursive: true, force: true });
    await rm(suites, { recursive: true, force: true });
    await rm(outside, { recursive: true, force: true });
  });

  test("a step's workdir/ is copied into the WORKDIR and its setup.sh runs there first; a failing one ends the trial", async () => {
    const suite = path.join(suites, "workdir");
    await files(path.join(suite, "steps-with-workdir"), {
      "task.toml": `schema_version = "1.4"
[environment.env]
GREETING = "hello"

[[steps]]
name = "one"

[[steps]]
name = "two"

[[steps]]
name = "three"
`,
      "environment/Dockerfile": "FROM ubuntu:24.04\nWORKDIR /app/src\n",
      "tests/test.sh": REWARD_IF("[ -f /app/src/done-$STEP ]"),
      "steps/one/instruction.md": "Step one.\n",
      "steps/one/workdir/data/input.txt": "from the workdir\n",
      // Harbor runs `bash <workdir>/setup.sh` from the working directory, in the agent's environment.
      "steps/one/workdir/setup.sh": 'echo "setup in $(pwd) says $GREETING"\ncat data/input.txt > prepared.txt\n',
      "steps/one/solution/solve.sh": `grep -q 'from the workdir' /app/src/prepared.txt && touch /app/src/done-one
# An attempt to make the next step's workdir copy write outside the trial: its data/ becomes a link.
rm -rf /app/src/data && ln -s ${outside} /app/src/data\n`,
      "steps/one/tests/test.sh": REWARD_IF("[ -f /app/src/done-one ]"),
      "steps/two/instruction.md": "Step two.\n",
      "steps/two/workdir/data/second.txt": "second\n",
      "steps/two/solution/solve.sh": "touch /app/src/done-two\n",
      "steps/two/tests/test.sh": REWARD_IF("[ -f /app/src/done-two ]"),
      "steps/three/instruction.md": "Step three.\n",
      "steps/three/workdir/setup.sh": "echo 'setup of three fails' >&2\nexit 7\n",
      "steps/three/solution/solve.sh": "touch /app/src/three-ran\n",
    });
    const result = await runEval(["run", suite, "--oracle", "--json"], { mockUrl: mock.url, home });
    const trial = trialOf<Trial>(result.stdout);
    assert.deepEqual(
      trial.details?.steps?.map((s) => [s.name, s.reward]),
      [
        ["one", 1],
        ["two", 1],
        ["three", 0],
      ],
      JSON.stringify(trial.details),
    );
    assert.match(trial.details?.steps?.[0]?.hookOutput ?? "", /setup in \/app\/src says hello/);
    const three = trial.details?.steps?.[2];
    assert.match(three?.error ?? "", /setup\.sh exited with 7: setup of three fails/);
    assert.match(three?.stopped ?? "", /setup/);
    // The mean of the steps verified (Harbor leaves an unverified step out of it), and the trial names the failure.
    assert.equal(trial.reward, 1);
    assert.match(trial.error ?? "", /step three: step's setup: setup\.sh exited with 7/);
    assert.match(result.stderr, /steps with a workdir\/ .*: one, two, three/);
    assert.deepEqual(readdirSync(outside), [], "the workdir copy wrote through a link into the host");
  });

  test("collect hooks run after the agent's part, before the verifier; a failing one is recorded, not fatal", async () => {
    const suite = path.join(suites, "collect");
    await files(path.join(suite, "collects"), {
      "task.toml": `[[verifier.collect]]
command = "cp /app/state.txt /logs/artifacts/snapshot.txt && echo snapped"

[[verifier.collect]]
command = "echo about to fail; exit 3"
timeout_sec = 5

[[verifier.collect]]
command = "pg_dump > /logs/artifacts/db.sql"
service = "db"
`,
      "instruction.md": "Nothing.\n",
      "tests/test.sh": REWARD_IF('[ "$(cat /logs/artifacts/snapshot.txt)" = state ]'),
      "solution/solve.sh": "echo state > /app/state.txt\n",
    });
    const result = await runEval(["run", suite, "--oracle", "--json"], { mockUrl: mock.url, home });
    assert.equal(result.code, 0, `${result.stdout}\n${result.stderr}`);
    const trial = trialOf<Trial>(result.stdout);
    assert.equal(trial.passed, true, JSON.stringify(trial));
    assert.equal(trial.error, null);
    const hooks = trial.details?.hookOutput ?? "";
    assert.match(hooks, /snapped/);
    assert.match(hooks, /about to fail\n\[collect hook exited with 3; the trial goes on\]/);
    assert.match(hooks, /\[not run: service db/);
    const report = await runEval(["report", runIdOf(result.stdout), "--trial", "collects"], {
      mockUrl: mock.url,
      home,
    });
    assert.match(report.stdout, /collect hooks:/);
  });

  test("a separate verifier sees a fresh environment with the artifacts, not what else the agent left", async () => {
    const suite = path.join(suites, "separate");
    const verifierChecks = [
      '[ "$(cat /app/out.txt)" = result ]', // an artifact, copied in
      '[ "$(cat /logs/artifacts/note.txt)" = note ]', // /logs/artifacts/, copied in
      "[ ! -e /app/planted.sh ]", // not an artifact: not there
      "[ -f /app/seed.txt ]", // the fresh environment: the agent removed it in its own
    ].join(" && ");
    await files(path.join(suite, "fresh-copy"), {
      "task.toml": `artifacts = ["/app/out.txt"]\n[verifier]\nenvironment_mode = "separate"\n`,
      "instruction.md": "Write result to /app/out.txt.\n",
      "environment/seed.txt": "seed\n",
      "tests/test.sh": REWARD_IF(verifierChecks),
      "solution/solve.sh":
        "echo result > /app/out.txt\necho note > /logs/artifacts/note.txt\nrm /app/seed.txt\n" +
        "printf '#!/bin/sh\\necho 1 > /logs/verifier/reward.txt\\n' > /app/planted.sh\n",
    });
    await files(path.join(suite, "built-from-tests"), {
      "task.toml": `artifacts = ["/app/out.txt"]\n[verifier.environment]\ncpus = 1\n`,
      "instruction.md": "Write result to /app/out.txt.\n",
      "environment/seed.txt": "seed\n",
      "tests/Dockerfile": "FROM python:3.12-slim\nWORKDIR /app\nCOPY . /tests/\nRUN echo built > /app/built.txt\n",
      "tests/test.sh": REWARD_IF(
        '[ -f /app/built.txt ] && [ ! -e /app/seed.txt ] && [ "$(cat /app/out.txt)" = result ]',
      ),
      "solution/solve.sh": "echo result > /app/out.txt\n",
    });
    await files(path.join(suite, "cannot-build"), {
      "task.toml": `[verifier.environment]\ndocker_image = "ghcr.io/example/grader:1"\n`,
      "instruction.md": "Nothing.\n",
      "tests/test.sh": REWARD_IF("true"),
      "solution/solve.sh": "true\n",
    });
    const result = await runEval(["run", suite, "--oracle", "--json"], { mockUrl: mock.url, home });
    assert.match(result.stderr, /fresh-copy: verifier runs in a separate environment: a fresh copy of the task's/);
    assert.match(
      result.stderr,
      /built-from-tests: verifier runs in a separate environment: built from tests\/Dockerfile/,
    );
    assert.match(result.stderr, /cannot-build: skipped: separate verifier environment: needs the image: FROM ghcr\.io/);
    const trials = result.stdout
      .split("\n")
      .filter((l) => l.includes('"type":"trial"'))
      .map((l) => JSON.parse(l) as Trial & { task: string });
    assert.deepEqual(trials.map((t) => [t.task, t.passed]).sort(), [
      ["built-from-tests", true],
      ["fresh-copy", true],
    ]);
    assert.match(trials[0]?.details?.verifierOutput ?? "", /\[verifier in a separate environment: /);
    assert.equal(result.code, 0, `${result.stdout}\n${result.stderr}`);
    // The verifier's workspace is gone with the trial's.
    assert.equal(existsSync(path.join(suite, "fresh-copy", "app")), false);
  });
});
