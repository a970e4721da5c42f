/**
 * `crow eval` on tasks of Harbor's current schema, through the built binary: a Dockerfile's portable steps (WORKDIR,
 * COPY, ENV, RUN) applied in the trial's sandbox, an unsupported instruction reported and its task skipped,
 * `[[task.authors]]` and inline tables read, `[verifier.env]` given to the verifier, named rewards kept whole, and
 * what each trial's scripts printed and how long each phase took kept in the store.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { openStore } from "@crow/core";
import { type MockLlm, startMockLlm } from "@crow/testkit";
import { files, runEval, runIdOf } from "./eval-helpers.js";

describe("crow eval: Harbor's task schema and Dockerfiles", () => {
  let mock: MockLlm;
  let home: string;
  let suites: string;
  before(async () => {
    mock = await startMockLlm();
    home = await mkdtemp(path.join(tmpdir(), "crow-eval-home-"));
    suites = await mkdtemp(path.join(tmpdir(), "crow-eval-suites-"));
  });
  after(async () => {
    await mock.close();
    await rm(home, { recursive: true, force: true });
    await rm(suites, { recursive: true, force: true });
  });

  test("a Dockerfile's WORKDIR, COPY, ENV and RUN are applied; USER is reported and its task skipped", async () => {
    const suite = path.join(suites, "docker");
    await files(path.join(suite, "built"), {
      "instruction.md": "Write the greeting.\n",
      "task.toml": `schema_version = "1.1"
[task]
name = "test/built"
keywords = ["docker"]
[[task.authors]]
name = "A"
email = "a@example.com"
[verifier]
timeout_sec = 60.0
env = { EXPECTED = "hello from generated" }
[environment]
cpus = 1
`,
      "environment/Dockerfile": `FROM ubuntu:24.04
RUN apt-get update && apt-get install -y bash && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY inputs/ /app/
ENV GREETING=hello
RUN echo "from $(cat seed.txt)" > generated.txt
CMD ["bash"]
`,
      "environment/inputs/seed.txt": "generated\n",
      "environment/unused.txt": "not copied\n",
      "solution/solve.sh": 'echo "$GREETING $(cat /app/generated.txt)" > /app/answer.txt\n',
      "tests/test.sh": `#!/bin/bash
echo "checking $(pwd)"
ok=0; [ "$(cat /app/answer.txt)" = "$EXPECTED" ] && ok=1
style=0; [ ! -e /app/unused.txt ] && [ ! -e /app/inputs ] && style=1
echo "{\\"correct\\": $ok, \\"layout\\": $style}" > /logs/verifier/reward.json
`,
    });
    await files(path.join(suite, "needs-image"), {
      "instruction.md": "x\n",
      "environment/Dockerfile": "FROM ubuntu:24.04\nUSER agent\n",
      "tests/test.sh": "echo 1 > /logs/verifier/reward.txt\n",
      "solution/solve.sh": "true\n",
    });
    const result = await runEval(["run", suite, "--oracle"], { mockUrl: mock.url, home });
    assert.equal(result.code, 0, `${result.stdout}\n${result.stderr}`);
    assert.match(result.stderr, /needs-image: skipped: needs the image: USER agent/);
    assert.match(result.stderr, /built: task\.toml fields not applied here: environment\.cpus/);
    assert.match(result.stderr, /built: environment emulated from its Dockerfile/);
    assert.match(result.stdout, /\| oracle \| 1\/1 \| 100\.0 %/);
    const store = await openStore(path.join(home, "crow.db"));
    try {
      const [trial] = await store.evals.listTrials(runIdOf(result.stdout));
      assert.equal(trial?.task, "built");
      assert.equal(trial?.passed, true);
      assert.deepEqual(trial?.details?.rewards, { correct: 1, layout: 1 });
      assert.match(trial?.details?.verifierOutput ?? "", /^checking \/app$/m);
      assert.ok(trial?.details?.emulated?.includes("COPY inputs/ /app/"));
      const phases = trial?.details?.phaseMs ?? {};
      assert.deepEqual(Object.keys(phases).sort(), ["agent", "setup", "verifier"]);
    } finally {
      await store.close();
    }
  });

  test("--oracle below 100 % exits 1 naming the failing tasks; report --trial shows why", async () => {
    const suite = path.join(suites, "oracle");
    const task = (check: string) => ({
      "instruction.md": "x\n",
      "tests/test.sh": `echo "checking the answer"\nif ${check}; then echo 1 > /logs/verifier/reward.txt; else echo "expected 42, got $(cat /app/a 2>&1)"; echo 0 > /logs/verifier/reward.txt; fi\n`,
      "solution/solve.sh": "echo 41 > /app/a\n",
    });
    await files(path.join(suite, "good"), task("true"));
    await files(path.join(suite, "bad"), task('[ "$(cat /app/a)" = 42 ]'));
    const result = await runEval(["run", suite, "--oracle"], { mockUrl: mock.url, home });
    assert.equal(result.code, 1, result.stderr);
    assert.match(
      result.stderr,
      /the oracle did not pass 1 task\(s\): bad \(crow eval report eval-\S+ --trial TASK says why\)/,
    );
    const report = await runEval(["report", runIdOf(result.stdout), "--trial", "bad#0"], { mockUrl: mock.url, home });
    assert.equal(report.code, 0, report.stderr);
    assert.match(report.stdout, /^## bad · oracle · #0: FAILED \(reward 0\)/);
    assert.match(report.stdout, /- time: [\d.]+ s \(setup [\d.]+ s, agent [\d.]+ s, verifier [\d.]+ s\)/);
    assert.match(
      report.stdout,
      /verifier output \(tests\/test\.sh\):\n```\nchecking the answer\nexpected 42, got 41\n```/,
    );
    const none = await runEval(["report", runIdOf(result.stdout), "--trial", "nope"], { mockUrl: mock.url, home });
    assert.equal(none.code, 2);
    assert.match(none.stderr, /--trial nope: no such trial .* tasks: bad, good/);
  });
  test("a public task pinning a mirrored official image runs; GPU and services tasks are skipped; a task without instruction.md is named", async () => {
    const suite = path.join(suites, "public");
    await files(path.join(suite, "mirrored"), {
      "instruction.md": "Write the sum.\n",
      "task.toml": 'version = "1.0"\n[verifier]\ntimeout_sec = 60.0\n',
      "environment/Dockerfile":
        "FROM public.ecr.aws/docker/library/ubuntu:24.04@sha256:0d39fcc8335d6d74d5502f6df2d30119ff4790ebbb60b364818d5112d9e3e932\nRUN mkdir -p /app\nWORKDIR /app\nCOPY data /app/data\n",
      "environment/data/numbers.txt": "1\n2\n",
      "solution/solve.sh": "#!/bin/bash\nawk '{s+=$1} END {print s}' /app/data/numbers.txt > /app/sum.txt\n",
      "tests/test.sh":
        '#!/bin/bash\n[ "$(cat /app/sum.txt)" = 3 ] && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt\n',
    });
    const plain = {
      "instruction.md": "x\n",
      "environment/Dockerfile": "FROM ubuntu:24.04\nWORKDIR /app\n",
      "tests/test.sh": "echo 1 > /logs/verifier/reward.txt\n",
      "solution/solve.sh": "true\n",
    };
    await files(path.join(suite, "gpu"), { ...plain, "task.toml": "[environment]\ngpus = 1\n" });
    await files(path.join(suite, "services"), { ...plain, "environment/docker-compose.yaml": "services: {}\n" });
    // Harbor's other files without the prompt: refused by name rather than left out of the suite unsaid.
    await files(path.join(suite, "no-prompt"), {
      "task.toml": 'version = "2.0"\n',
      "tests/test.sh": "echo 1 > /logs/verifier/reward.txt\n",
    });
    const refused = await runEval(["run", suite, "--oracle"], { mockUrl: mock.url, home });
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /task no-prompt: \S+no-prompt\/instruction\.md is missing/);
    await rm(path.join(suite, "no-prompt"), { recursive: true });
    const result = await runEval(["run", suite, "--oracle"], { mockUrl: mock.url, home });
    assert.equal(result.code, 0, `${result.stdout}\n${result.stderr}`);
    assert.match(result.stderr, /mirrored: environment emulated from its Dockerfile/);
    assert.match(result.stderr, /gpu: skipped: needs the image: \[environment\] gpus = 1 \(trials get no GPU\)/);
    assert.match(
      result.stderr,
      /services: skipped: needs the image: environment\/docker-compose\.yaml \(its services\)/,
    );
    assert.match(result.stdout, /\| oracle \| 1\/1 \| 100\.0 %/);
  });
});
