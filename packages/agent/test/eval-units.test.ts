/**
 * The pure parts of `crow eval`: task.toml as Harbor writes it, the statistics of report and compare, and the
 * task-name globs of `--tasks`.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { EvalTrialRecord } from "@crow/core";
import { renderReport } from "../src/eval/render.js";
import { median, pairedBootstrap, passAtK, passHatK, wilson } from "../src/eval/stats.js";
import { globMatches } from "../src/eval/suite.js";
import { compareTrials, summarize } from "../src/eval/summary.js";
import { parseToml, TomlError } from "../src/eval/toml.js";

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
    assert.deepEqual(toml, {
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

  test("what it cannot read is an error naming the line", () => {
    assert.throws(
      () => parseToml("[agent]\nlimits = { cpu = 1 }\n", "x/task.toml"),
      (error: unknown) => {
        assert.ok(error instanceof TomlError);
        assert.match(error.message, /^x\/task\.toml:2: unsupported value \{ cpu = 1 \}/);
        return true;
      },
    );
    assert.throws(() => parseToml("just words\n", "t.toml"), /t\.toml:1: expected "key = value"/);
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
  });

  test("--tasks globs match whole names", () => {
    assert.equal(globMatches("py-*", "py-fix"), true);
    assert.equal(globMatches("py-*", "my-py-fix"), false);
    assert.equal(globMatches("t?", "t1"), true);
    assert.equal(globMatches("a.b", "axb"), false);
  });
});
