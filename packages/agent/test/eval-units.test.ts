/**
 * The pure parts of `crow eval`: task.toml as Harbor writes it, the statistics of report and compare, and the
 * task-name globs of `--tasks`.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { EvalTrialRecord } from "@crow/core";
import { planDockerfile } from "../src/eval/dockerfile.js";
import { renderReport } from "../src/eval/render.js";
import { median, pairedBootstrap, passAtK, passHatK, wilson } from "../src/eval/stats.js";
import { globMatches } from "../src/eval/suite.js";
import { compareTrials, summarize } from "../src/eval/summary.js";
import { ignoredFields } from "../src/eval/task-schema.js";
import { parseToml, TomlError } from "../src/eval/toml.js";
import { parseRewardJson } from "../src/eval/verify.js";

/** smol-toml's tables have no prototype (no pollution through `__proto__` keys): compared as plain data. */
const plain = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

describe("task.toml", () => {
  test("a Terminal-Bench 2.0 task.toml reads as its tables", () => {
    const toml = parseToml(
      `version = "1.0"

[metadata]
author_name = "Jane # not a comment"
difficulty = "medium" # a comment
tags = [
  "python",
  'data', # why
]
expert_time_estimate_min = 30.0
notes = """
Two lines,
"quoted"."""

[verifier]
timeout_sec = 900.0

[agent]
timeout_sec = 1_200

[environment]
cpus = 1
allow_internet = false
`,
      "task.toml",
    );
    assert.deepEqual(plain(toml), {
      version: "1.0",
      metadata: {
        author_name: "Jane # not a comment",
        difficulty: "medium",
        tags: ["python", "data"],
        expert_time_estimate_min: 30,
        notes: 'Two lines,\n"quoted".',
      },
      verifier: { timeout_sec: 900 },
      agent: { timeout_sec: 1200 },
      environment: { cpus: 1, allow_internet: false },
    });
  });

  test("Harbor's current schema: [[task.authors]], inline tables, env tables; what has no effect here is named", () => {
    const toml = parseToml(
      `schema_version = "1.1"

[task]
name = "org/hello"

[[task.authors]]
name = "B"

[verifier]
timeout_sec = 120.0
env = { MODE = "strict", LEVEL = 2 }
user = "root"

[solution.env]
HINT = "x"

[environment]
cpus = 2
memory_mb = 4096
allow_internet = false
env = { LANG = "C.UTF-8" }

[[steps]]
name = "one"
healthcheck = "true"

[steps.agent]
user = "agent"
`,
      "task.toml",
    );
    assert.deepEqual(plain(toml.task), { name: "org/hello", authors: [{ name: "B" }] });
    assert.deepEqual(plain((toml.verifier as Record<string, unknown>).env), { MODE: "strict", LEVEL: 2 });
    // [[steps]] applies (steps.ts); what a step sets that has no effect here is named by its index.
    assert.deepEqual(ignoredFields(toml), [
      "verifier.user",
      "environment.cpus",
      "environment.memory_mb",
      "steps[0].healthcheck",
      "steps[0].agent.user",
    ]);
    const inline = parseToml('[task]\nauthors = [{ name = "A", email = "a@example.com" }]\n', "t.toml");
    assert.deepEqual(plain(inline.task), { authors: [{ name: "A", email: "a@example.com" }] });
  });

  test("what is not TOML is an error naming the file, line and column", () => {
    assert.throws(
      () => parseToml("[agent]\ntimeout_sec = \n", "x/task.toml"),
      (error: unknown) => {
        assert.ok(error instanceof TomlError);
        assert.match(error.message, /^x\/task\.toml:2:\d+: /);
        return true;
      },
    );
  });
});

describe("reward.json", () => {
  test("one reward, named rewards kept whole (pass: `reward`, else all of them reach 1)", () => {
    assert.deepEqual(parseRewardJson("0.5"), { reward: 0.5, rewards: null });
    assert.deepEqual(parseRewardJson('{"reward": 1}'), { reward: 1, rewards: null });
    assert.deepEqual(parseRewardJson('{"correct": 1, "style": 0.5}'), {
      reward: 0.5,
      rewards: { correct: 1, style: 0.5 },
    });
    assert.deepEqual(parseRewardJson('{"reward": 1, "speed": 0.2, "note": "x"}'), {
      reward: 1,
      rewards: { reward: 1, speed: 0.2 },
    });
    assert.equal(parseRewardJson('{"note": "x"}'), undefined);
    assert.equal(parseRewardJson("not json"), undefined);
  });
});

describe("Dockerfile", () => {
  test("WORKDIR, COPY/ADD, ENV, ARG and RUN are applied; package installs the host has are dropped", () => {
    const plan = planDockerfile(`FROM ubuntu:24.04
ARG V=3
ENV GREETING="hello world" \\
    N=$V
WORKDIR /app
RUN apt-get update && apt-get install -y bash coreutils && rm -rf /var/lib/apt/lists/*
COPY inputs/ /app/
ADD data.txt sub/
RUN python3 gen.py > out.txt
CMD ["bash"]
`);
    assert.ok(plan.ok, JSON.stringify(plan));
    assert.deepEqual(plan.env, { GREETING: "hello world", N: "3" });
    assert.equal(plan.workdir, "/app");
    assert.deepEqual(plan.steps, [
      { kind: "copy", sources: ["inputs/"], dest: "/app/" },
      { kind: "copy", sources: ["data.txt"], dest: "/app/sub/", add: true },
      {
        kind: "run",
        command: "python3 gen.py > out.txt",
        cwd: "/app",
        env: { V: "3", GREETING: "hello world", N: "3" },
      },
    ]);
    assert.equal(plan.emulated.length, 8);
  });

  test("what needs the image is said, with the reason", () => {
    const reason = (text: string) => {
      const plan = planDockerfile(text);
      return plan.ok ? "ok" : plan.reason;
    };
    assert.match(reason("FROM myorg/custom-env:1\n"), /needs the image: FROM myorg\/custom-env:1 is not a plain/);
    assert.match(reason("FROM python:3.13 AS build\nFROM ubuntu:24.04\n"), /multi-stage/);
    assert.match(reason("FROM ubuntu:24.04\nUSER agent\n"), /needs the image: USER agent/);
    assert.match(reason("FROM ubuntu:24.04\nCOPY --from=build /x /app/x\n"), /--from/);
    assert.match(reason("FROM ubuntu:24.04\nCOPY x /opt/x\n"), /outside \/app/);
    assert.match(
      reason("FROM ubuntu:24.04\nRUN apt-get install -y crow-no-such-package\n"),
      /apt package\(s\) not on this host: crow-no-such-package/,
    );
    assert.equal(reason("FROM ghcr.io/laude-institute/t-bench/python-3-13:20250620\nWORKDIR /app\n"), "ok");
    // Docker Hub's official images pulled through a mirror are the same plain bases.
    assert.equal(reason("FROM public.ecr.aws/docker/library/ubuntu:24.04@sha256:0d39fc\nWORKDIR /app\n"), "ok");
    assert.equal(reason("FROM mirror.gcr.io/library/python:3.12-slim\n"), "ok");
    assert.match(reason("FROM public.ecr.aws/myorg/ubuntu:24.04\n"), /is not a plain/);
  });
});

describe("eval statistics", () => {
  test("Wilson interval, pass@k and pass^k", () => {
    const [low, high] = wilson(6, 6);
    assert.equal(low.toFixed(3), "0.610");
    assert.equal(high, 1);
    assert.deepEqual(wilson(0, 0), [0, 1]);
    assert.equal(passAtK(10, 3, 1).toFixed(3), "0.300");
    assert.equal(passAtK(5, 1, 5), 1);
    assert.equal(passAtK(5, 0, 3), 0);
    assert.equal(passHatK(5, 4, 2).toFixed(3), "0.600");
    assert.equal(passHatK(3, 3, 3), 1);
    assert.equal(median([5, 1, 3]), 3);
    assert.equal(median([4, 1, 3, 2]), 2.5);
  });

  test("the paired bootstrap brackets the mean difference and is the same on every run", () => {
    const differences = [-1, -1, -1, -1, 0, 0];
    const [low, high] = pairedBootstrap(differences);
    assert.ok(low <= -2 / 3 && -2 / 3 <= high);
    assert.ok(high < 0);
    assert.deepEqual(pairedBootstrap(differences), [low, high]);
    assert.deepEqual(pairedBootstrap([0, 0, 0]), [0, 0]);
  });

  test("with k trials per task the report gives pass@k and pass^k, cost and tokens per solved task", () => {
    const trial = (task: string, index: number, passed: boolean, wallMs: number) =>
      ({
        runId: "r",
        task,
        variant: "m",
        trial: index,
        passed,
        reward: passed ? 1 : 0,
        wallMs,
        promptTokens: 100,
        completionTokens: 10,
        cost: 0.5,
        error: null,
      }) as EvalTrialRecord;
    const trials = [
      trial("x", 0, true, 1000),
      trial("x", 1, true, 3000),
      trial("y", 0, true, 2000),
      trial("y", 1, false, 5000),
      trial("z", 0, false, 4000),
      trial("z", 1, false, 6000),
    ];
    const summary = summarize("m", trials);
    assert.equal(summary.k, 2);
    assert.equal(summary.passRate, 0.5);
    assert.equal(summary.passAtK?.toFixed(4), (2 / 3).toFixed(4));
    assert.equal(summary.passHatK?.toFixed(4), (1 / 3).toFixed(4));
    assert.equal(summary.cost, 3);
    assert.equal(summary.costPerSolved, 1);
    assert.equal(summary.tokensPerSolved, 220);
    // A provider that reports no usage: the tokens are unknown (shown "–"), not 0 per solved task.
    const unreported = trials.map((t) => ({ ...t, requests: 2, promptTokens: 0, completionTokens: 0 }));
    assert.equal(summarize("m", unreported).tokensPerSolved, null);
    assert.equal(summary.medianWallMs, 3500);
    const markdown = renderReport(
      { id: "r", name: null, suite: "/s", config: {}, createdAt: "2026-01-01T00:00:00Z" },
      [summary],
      trials,
    );
    assert.match(markdown, /\| variant \| passed \| pass rate \(95 % CI\) \| pass@2 \| pass\^2 \| cost \|/);
    assert.match(
      markdown,
      /\| m \| 3\/6 \| 50\.0 % \(18\.8 % – 81\.2 %\) \| 66\.7 % \| 33\.3 % \| 3\.0000 \| 1\.0000 \| 220 \| 3\.5 s \| 0 \|/,
    );
    assert.match(markdown, /\| y \| 1\/2 \|/);
  });

  test("compare pairs by task and leaves out tasks only one side ran", () => {
    const trial = (task: string, passed: boolean) => ({ task, passed }) as EvalTrialRecord;
    const comparison = compareTrials(
      { label: "A", trials: [trial("x", true), trial("y", false), trial("only-a", true)] },
      { label: "B", trials: [trial("x", false), trial("y", true), trial("only-b", false)] },
    );
    assert.equal(comparison.tasks, 2);
    assert.deepEqual(comparison.regressed, ["x"]);
    assert.deepEqual(comparison.fixed, ["y"]);
    assert.equal(comparison.difference, 0);
    assert.equal(comparison.regression, false);
    // Over several trials, either way counts: 0/2 → 1/2 is fixed just as 2/2 → 1/2 is regressed.
    const two = compareTrials(
      { label: "A", trials: [trial("up", false), trial("up", false), trial("down", true), trial("down", true)] },
      { label: "B", trials: [trial("up", true), trial("up", false), trial("down", true), trial("down", false)] },
    );
    assert.deepEqual(two.fixed, ["up"]);
    assert.deepEqual(two.regressed, ["down"]);
  });

  test("--tasks globs match whole names", () => {
    assert.equal(globMatches("py-*", "py-fix"), true);
    assert.equal(globMatches("py-*", "my-py-fix"), false);
    assert.equal(globMatches("t?", "t1"), true);
    assert.equal(globMatches("a.b", "axb"), false);
  });
});
