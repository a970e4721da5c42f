/**
 * The viewer's eval pages over a SQLite store: the runs list, one run's tasks × variants matrix with each trial
 * linked to its session, and two runs side by side with the flipped tasks. Needs `npm run build` (the page bundle).
 */
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { type EvalTrialRecord, openStore, type Store } from "@crow/core";
import { type RunningViewer, startViewer } from "../src/viewer/server.js";

function trial(runId: string, task: string, variant: string, index: number, passed: boolean, sessionId: string | null) {
  const record: Omit<EvalTrialRecord, "finishedAt"> = {
    runId,
    task,
    variant,
    trial: index,
    sessionId,
    reward: passed ? 1 : 0,
    passed,
    stopReason: "end_turn",
    wallMs: 2000,
    requests: 2,
    promptTokens: 500,
    completionTokens: 50,
    cachedTokens: 0,
    cost: 0.01,
    toolCalls: 1,
    toolErrors: 0,
    error: passed ? null : "<b>verifier</b> said no",
    details: passed
      ? null
      : { phaseMs: { setup: 100, agent: 1500, verifier: 400 }, verifierOutput: "FAILED test_answer - <assert>" },
  };
  return record;
}

describe("viewer eval pages", () => {
  let dir: string;
  let store: Store;
  let viewer: RunningViewer;
  let sessionId: string;
  const base = () => viewer.url.replace(/\/$/, "");
  const get = async (pathname: string) => {
    const res = await fetch(`${base()}${pathname}`);
    return { status: res.status, body: await res.text() };
  };

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "crow-viewer-eval-"));
    store = await openStore(path.join(dir, "crow.db"));
    sessionId = (await store.createSession({ cwd: "/tmp/w", title: "eval run-a fix-bug m1 #0" })).id;
    await store.evals.createRun({ id: "run-a", name: "baseline", suite: "/suites/s", config: {} });
    await store.evals.createRun({ id: "run-b", name: null, suite: "/suites/s", config: {} });
    for (const [task, passA, passB] of [
      ["fix-bug", true, false],
      ["<script>x</script>", true, true],
      ["write-docs", false, true],
    ] as const) {
      await store.evals.recordTrial(trial("run-a", task, "m1", 0, passA, sessionId));
      await store.evals.recordTrial(trial("run-a", task, "m1", 1, passA, null));
      await store.evals.recordTrial(trial("run-a", task, "m2", 0, !passA, null));
      await store.evals.recordTrial(trial("run-b", task, "m1", 0, passB, null));
    }
    viewer = await startViewer({ store, token: false });
  });
  after(async () => {
    await viewer.close();
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  test("the runs list links every run", async () => {
    const page = await get("/evals");
    assert.equal(page.status, 200);
    assert.match(page.body, /href="\/evals\/run-a">run-a<\/a><\/td><td>baseline/);
    assert.match(page.body, /href="\/evals\/run-b"/);
  });

  test("a run shows its variants, the tasks × variants matrix and each trial in full, linked to its session", async () => {
    const page = await get("/evals/run-a");
    assert.equal(page.status, 200);
    assert.match(page.body, /<tr data-variant="m1"><th>m1<\/th><td class="num">4\/6<\/td>/);
    assert.match(
      page.body,
      /<tr data-task="fix-bug"><th>fix-bug<\/th><td class="cell" data-passed="2" data-trials="2">2\/2 /,
    );
    assert.match(page.body, /<a class="trial pass" href="\/evals\/run-a#trial-fix-bug-m1-0"/);
    // Each trial in full: error and output visible (not in a tooltip), time per phase, its session.
    const section = /<section class="trial pass" id="trial-fix-bug-m1-0"[\s\S]*?<\/section>/.exec(page.body)?.[0] ?? "";
    assert.match(section, new RegExp(`<a class="trial-session" href="/s/${sessionId}">session</a>`));
    const failed =
      /<section class="trial fail" id="trial-write-docs-m1-0"[\s\S]*?<\/section>/.exec(page.body)?.[0] ?? "";
    assert.match(failed, /<p class="trial-error">&lt;b&gt;verifier&lt;\/b&gt; said no<\/p>/);
    assert.match(failed, /time 2\.0 s \(setup 0\.1 s, agent 1\.5 s, verifier 0\.4 s\)/);
    assert.match(failed, / · 2 requests \(500 prompt tokens; 50 completion tokens\) · 1 tool call/);
    assert.match(failed, /<summary>verifier output<\/summary><pre>FAILED test_answer - &lt;assert&gt;<\/pre>/);
    // Task names and errors are text, never markup.
    assert.ok(!page.body.includes("<script>x</script>"));
    assert.match(page.body, /&lt;script&gt;x&lt;\/script&gt;/);
    assert.match(page.body, /&lt;b&gt;verifier&lt;\/b&gt; said no/);
    assert.equal((await get("/evals/no-such-run")).status, 404);
  });

  test("a trial's session links back to its run and shows its reward", async () => {
    const page = await get(`/s/${sessionId}`);
    assert.equal(page.status, 200);
    assert.match(
      page.body,
      /<p class="eval-trial">eval trial <a class="eval-trial-link" href="\/evals\/run-a#trial-fix-bug-m1-0">run-a · fix-bug #0<\/a>: passed, reward 1<\/p>/,
    );
  });

  test("two runs side by side name the flipped tasks", async () => {
    const page = await get("/evals/compare?a=run-a:m1&b=run-b");
    assert.equal(page.status, 200, page.body);
    assert.match(page.body, /Regressed: fix-bug · Fixed: write-docs/);
    assert.match(page.body, /<th>run-a:m1<\/th><th>run-b:m1<\/th>/);
    const ambiguous = await get("/evals/compare?a=run-a&b=run-b");
    assert.equal(ambiguous.status, 400);
    assert.match(ambiguous.body, /variants of run-a: m1, m2/);
  });
});
