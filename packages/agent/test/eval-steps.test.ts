/**
 * Harbor's task schema 1.4 in `crow eval`, through the built binary with small tasks made here: multi-step tasks
 * (`[[steps]]`: per-step prompts, sessions, verifiers and solutions, `min_reward`, the reward roll-up), artifacts,
 * `network_mode`, and a removed key named with what replaced it.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { type MockLlm, reply, startMockLlm } from "@crow/testkit";
import { files, REWARD_IF, runEval, runIdOf, trialOf } from "./eval-helpers.js";

interface StepDetail {
  name: string;
  reward: number;
  error: string | null;
  sessionId: string | null;
  stopped?: string;
}
interface Artifact {
  source: string;
  destination: string;
  content?: string;
  note?: string;
}
interface Trial {
  reward: number;
  passed: boolean;
  error: string | null;
  sessionId: string | null;
  details?: { steps?: StepDetail[]; artifacts?: Artifact[] };
}

/** Two steps: the first makes /app/a.txt, the second /app/b.txt from it; the task's tests/ has a helper both use. */
const TWO_STEPS = {
  "task.toml": `schema_version = "1.4"
multi_step_reward_mode = "final"
artifacts = ["/app/a.txt", { source = "/app/leak", destination = "leak.txt" }, "/etc/hostname"]

[[steps]]
name = "make-a"
min_reward = 1.0

[steps.agent]
timeout_sec = 60

[[steps]]
name = "make-b"

[steps.verifier]
timeout_sec = 30
env = { WANT = "a-then-b" }
`,
  "tests/helper.sh": "#!/bin/bash\n[ -f /app/a.txt ] && grep -qx a /app/a.txt\n",
  "tests/test.sh": REWARD_IF("bash /tests/helper.sh"),
  "steps/make-a/instruction.md": "Write the letter a into /app/a.txt.\n",
  "steps/make-a/solution/solve.sh":
    "echo a > /app/a.txt\nln -s /etc/passwd /app/leak\necho kept > /logs/artifacts/log.txt\n",
  "steps/make-b/instruction.md": "Copy /app/a.txt to /app/b.txt and append b.\n",
  // The step's test.sh wins over the task's; the task's helper is still in /tests.
  "steps/make-b/tests/test.sh": REWARD_IF(
    'bash /tests/helper.sh && [ "$(cat /app/b.txt)" = "$(printf \'a\\nb\')" ] && [ "$WANT" = a-then-b ]',
  ),
  "steps/make-b/solution/solve.sh": "cp /app/a.txt /app/b.txt && echo b >> /app/b.txt\n",
};

describe("crow eval: Harbor task schema 1.4", () => {
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

  test("a multi-step task: each step's solution and verifier in order, the steps' rewards, artifacts collected", async () => {
    const suite = path.join(suites, "oracle-steps");
    await files(path.join(suite, "two-steps"), TWO_STEPS);
    const result = await runEval(["run", suite, "--oracle", "--json"], { mockUrl: mock.url, home });
    assert.equal(result.code, 0, `${result.stdout}\n${result.stderr}`);
    const trial = trialOf<Trial>(result.stdout);
    assert.equal(trial.passed, true, JSON.stringify(trial));
    assert.deepEqual(
      trial.details?.steps?.map((s) => [s.name, s.reward, s.error]),
      [
        ["make-a", 1, null],
        ["make-b", 1, null],
      ],
    );
    assert.match(result.stderr, /two-steps: 2 steps \(make-a, make-b\), reward: mean/);
    assert.match(result.stderr, /multi_step_reward_mode was removed in task schema 1\.3.*multi_step_reward_strategy/);
    const artifacts = trial.details?.artifacts ?? [];
    const by = (source: string) => artifacts.find((a) => a.source === source);
    assert.equal(by("/logs/artifacts/log.txt")?.content, "kept\n");
    assert.equal(by("/app/a.txt")?.content, "a\n");
    assert.equal(by("/app/a.txt")?.destination, "app/a.txt");
    // A link the solution planted to a host file is not copied into the record.
    assert.equal(by("/app/leak")?.content, undefined);
    assert.match(by("/app/leak")?.note ?? "", /not collected/);
    assert.match(by("/etc/hostname")?.note ?? "", /only \/app and \/logs/);
    const report = await runEval(["report", runIdOf(result.stdout), "--trial", "two-steps"], {
      mockUrl: mock.url,
      home,
    });
    assert.match(report.stdout, /### step make-b: reward 1/);
    assert.match(report.stdout, /artifact \/app\/a\.txt → app\/a\.txt/);
  });

  test("min_reward: a step below it ends the trial; the reward is the mean of the steps that ran", async () => {
    const suite = path.join(suites, "stops");
    await files(path.join(suite, "stops-early"), {
      ...TWO_STEPS,
      "task.toml": TWO_STEPS["task.toml"].replace('multi_step_reward_mode = "final"\n', ""),
      "steps/make-a/solution/solve.sh": "echo not-a > /app/a.txt\n",
      "steps/make-b/solution/solve.sh": "echo ran > /app/make-b-ran\n",
    });
    const result = await runEval(["run", suite, "--oracle", "--json"], { mockUrl: mock.url, home });
    assert.equal(result.code, 1, `${result.stdout}\n${result.stderr}`);
    const trial = trialOf<Trial>(result.stdout);
    assert.equal(trial.reward, 0);
    assert.equal(trial.details?.steps?.length, 1, JSON.stringify(trial.details));
    assert.match(trial.details?.steps?.[0]?.stopped ?? "", /min_reward 1/);
    assert.match(trial.error ?? "", /stopped after step make-a/);
  });

  test("an agent's steps are fresh sessions on each step's instruction, in the one workspace", async () => {
    const suite = path.join(suites, "agent-steps");
    await files(path.join(suite, "two-steps"), TWO_STEPS);
    mock.script(
      reply().toolCall("write", { file_path: "a.txt", content: "a\n" }),
      reply().text("Wrote it."),
      reply().toolCall("terminal", { command: "cp a.txt b.txt && echo b >> b.txt" }),
      reply().text("Done."),
    );
    const result = await runEval(["run", suite, "--json"], { mockUrl: mock.url, home });
    assert.equal(result.code, 0, `${result.stdout}\n${result.stderr}`);
    mock.assertDone();
    const trial = trialOf<Trial>(result.stdout);
    assert.equal(trial.passed, true, JSON.stringify(trial));
    const [first, second] = trial.details?.steps ?? [];
    assert.ok(first?.sessionId && second?.sessionId);
    assert.notEqual(first.sessionId, second.sessionId);
    // The second step's first request: its own prompt, nothing of the first step's conversation.
    const stepTwo = mock.requests.at(-2);
    const users = (stepTwo?.body.messages ?? []).filter((m) => m.role === "user").map((m) => String(m.content));
    assert.equal(users.length, 1, JSON.stringify(stepTwo?.body.messages));
    assert.match(users[0] ?? "", /Copy \/app\/a\.txt to \/app\/b\.txt/);
  });

  test("network_mode: an unknown mode is refused naming the field; allowlist's hosts are said not to apply", async () => {
    const suite = path.join(suites, "network");
    const task = path.join(suite, "net");
    await files(task, {
      "instruction.md": "Nothing.\n",
      "task.toml": '[environment]\nnetwork_mode = "allowlist"\nallowed_hosts = ["pypi.org"]\n',
      "tests/test.sh": "#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n",
      "solution/solve.sh": "true\n",
    });
    const ok = await runEval(["run", suite, "--oracle", "--json"], { mockUrl: mock.url, home });
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stderr, /not applied here: environment\.allowed_hosts/);
    await writeFile(path.join(task, "task.toml"), '[verifier]\nnetwork_mode = "internet"\n');
    const bad = await runEval(["run", suite, "--oracle", "--json"], { mockUrl: mock.url, home });
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /\[verifier\] network_mode must be one of "public", "no-network", "allowlist"/);
  });
});
