/**
 * Issue 49, the proof in the user's hands: `crow eval run --prompt lean,full` runs the built-in lean default and the
 * fuller texts of earlier versions on one suite (each trial's requests carry its version's prompt and tool texts), and
 * `crow eval compare` sets the two side by side.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { type CapturedRequest, type MockLlm, reply, startMockLlm } from "@crow/testkit";
import { runEval, runIdOf, writeSuite } from "./eval-helpers.js";

const terminalText = (r: CapturedRequest) =>
  r.body.tools?.find((t) => t.function.name === "terminal")?.function.description ?? "";

describe("crow eval: the lean and full prompt versions", { timeout: 150_000 }, () => {
  let mock: MockLlm;
  let home: string;
  let suites: string;
  before(async () => {
    mock = await startMockLlm();
    home = await mkdtemp(path.join(tmpdir(), "crow-eval-versions-home-"));
    suites = await mkdtemp(path.join(tmpdir(), "crow-eval-versions-suites-"));
  });
  after(async () => {
    await mock.close();
    await rm(home, { recursive: true, force: true });
    await rm(suites, { recursive: true, force: true });
  });

  test("run --prompt lean,full runs both on the suite; compare reports them side by side", async () => {
    const names = ["t1", "t2"];
    const suite = writeSuite(
      path.join(suites, "versions"),
      Object.fromEntries(names.map((name) => [name, { check: "grep -qx done answer.txt" }])),
    );
    // Per task: the lean trial, then the full one; each solves the task and checks it got its version's texts.
    for (const _ of names) {
      for (const full of [false, true]) {
        mock.script(
          reply()
            .toolCall("terminal", { command: "echo done > answer.txt" })
            .expect((r) => {
              const system = String(r.body.messages[0]?.content);
              if (full) {
                assert.match(system, /<WORKING>/);
                assert.match(terminalText(r), /State persists between calls/);
              } else {
                assert.doesNotMatch(system, /<WORKING>/);
                assert.doesNotMatch(terminalText(r), /State persists between calls/);
              }
            }),
          reply().text("Done."),
        );
      }
    }
    const result = await runEval(["run", suite, "--prompt", "lean,full", "--json"], { mockUrl: mock.url, home });
    assert.equal(result.code, 0, result.stderr);
    mock.assertDone();
    const runId = runIdOf(result.stdout);
    const report = JSON.parse((await runEval(["report", runId, "--json"], { mockUrl: mock.url, home })).stdout) as {
      variants: Array<{ variant: string; passed: number; trials: number }>;
    };
    assert.deepEqual(
      report.variants.map((v) => [v.variant, v.passed, v.trials]),
      [
        ["mock-model+lean", 2, 2],
        ["mock-model+full", 2, 2],
      ],
    );
    const compared = await runEval(
      ["compare", `${runId}:mock-model+full`, `${runId}:mock-model+lean`, "--fail-on-regression", "--json"],
      { mockUrl: mock.url, home },
    );
    assert.equal(compared.code, 0, compared.stdout + compared.stderr);
    const comparison = JSON.parse(compared.stdout) as { fixed: string[]; regressed: string[]; regression: boolean };
    assert.deepEqual([comparison.fixed, comparison.regressed, comparison.regression], [[], [], false]);
  });
});
