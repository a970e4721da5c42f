/**
 * `crow eval run / report / compare` through the built binary, against the scripted mock LLM: rewards as the
 * verifiers give them, prompt versions compared, timeouts and crashing verifiers recorded, tests/ hidden from the
 * agent, the oracle, and `--resume` after the run was killed.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import type { EvalTrialRecord } from "@crow/core";
import { openStore } from "@crow/core";
import { type MockLlm, REPO_ROOT, reply, startMockLlm } from "@crow/testkit";
import { runEval, runIdOf, writeSuite } from "./eval-helpers.js";

interface ReportJson {
  trials: EvalTrialRecord[];
  variants: Array<{ variant: string; passed: number; trials: number }>;
}

/** The recorded trials of a run, by `task` (one variant, one trial each). */
async function rewards(mock: MockLlm, home: string, runId: string): Promise<Record<string, number>> {
  const report = await runEval(["report", runId, "--json"], { mockUrl: mock.url, home });
  assert.equal(report.code, 0, report.stderr);
  const json = JSON.parse(report.stdout) as ReportJson;
  return Object.fromEntries(json.trials.map((t) => [t.task, t.reward]));
}

/** One turn that runs `command` in the workspace's terminal, then one that says it is done. */
function shellThenDone(mock: MockLlm, command: string): void {
  mock.script(reply().toolCall("terminal", { command }), reply().text("Done."));
}

describe("crow eval", () => {
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

  test("the verifiers' rewards are recorded per task, with each trial's session in the store", async () => {
    const suite = writeSuite(path.join(suites, "mixed"), {
      "a-solved": { check: "grep -qx yes answer.txt", instruction: "Write yes to /app/answer.txt.\n" },
      "b-unsolved": { check: "grep -qx yes answer.txt" },
      "c-partial": { verifier: 'echo \'{"reward": 0.5}\' > "$EVAL_LOGS_DIR/verifier/reward.json"' },
      "d-solved": { check: '[ "$(cat out.txt)" = 42 ]', environment: { "seed.txt": "41\n" } },
    });
    shellThenDone(mock, "echo yes > answer.txt");
    mock.script(reply().text("I cannot do that.").usage(100, 5, { cached: 40 }));
    mock.script(reply().text("Nothing to do."));
    shellThenDone(mock, "echo $(( $(cat seed.txt) + 1 )) > out.txt");
    const result = await runEval(["run", suite], { mockUrl: mock.url, home });
    assert.equal(result.code, 0, result.stderr);
    mock.assertDone();
    const runId = runIdOf(result.stdout);
    assert.deepEqual(await rewards(mock, home, runId), {
      "a-solved": 1,
      "b-unsolved": 0,
      "c-partial": 0.5,
      "d-solved": 1,
    });
    assert.match(result.stdout, /\| mock-model \| 2\/4 \| 50\.0 %/);

    // The first request of a trial is its instruction, in a session whose cwd is a fresh copy of environment/.
    const first = mock.requests[0]?.body.messages.find((m) => m.role === "user");
    // Harbor's /app is there in the trial's sandbox (the workspace, for the shell and the file tools alike): every
    // instruction goes as it is.
    assert.equal(first?.content, "Write yes to /app/answer.txt.\n");
    assert.equal(mock.requests[2]?.body.messages.find((m) => m.role === "user")?.content, "Solve b-unsolved.\n");
    const store = await openStore(path.join(home, "crow.db"));
    try {
      const trials = await store.evals.listTrials(runId);
      const unsolved = trials.find((t) => t.task === "b-unsolved");
      assert.equal(unsolved?.requests, 1);
      assert.equal(unsolved?.promptTokens, 100);
      assert.equal(unsolved?.cachedTokens, 40);
      // The mock sends no usage unless told: the requests are counted all the same (one per model request).
      const unreported = trials.find((t) => t.task === "d-solved");
      assert.equal(unreported?.requests, 2);
      assert.equal(unreported?.promptTokens, 0);
      const solved = trials.find((t) => t.task === "a-solved");
      assert.equal(solved?.requests, 2);
      assert.equal(solved?.toolCalls, 1);
      assert.equal(solved?.passed, true);
      const session = await store.getSession(solved?.sessionId ?? "");
      assert.equal(session?.mode, "code");
      assert.match(session?.title ?? "", new RegExp(`eval ${runId} a-solved mock-model #0`));
      const messages = await store.loadMessages(session?.id ?? "");
      assert.equal(messages.at(-1)?.message.content, "Done.");
    } finally {
      await store.close();
    }
    // One trial told in full: its requests and tokens, or that the provider reported none.
    const told = await runEval(["report", runId, "--trial", "d-solved"], { mockUrl: mock.url, home });
    assert.equal(told.code, 0, told.stderr);
    assert.match(told.stdout, /· 2 requests \(the provider reported no token counts\), 1 tool call \(0 failed\)/);
    const counted = await runEval(["report", runId, "--trial", "b-unsolved"], { mockUrl: mock.url, home });
    assert.match(
      counted.stdout,
      /· 1 request \(100 prompt tokens, 40 of them cached; 5 completion tokens\), 0 tool calls/,
    );
  });

  test("two prompt versions: compare names the flipped tasks, and --fail-on-regression exits 1 only for the worse one", async () => {
    const names = ["t1", "t2", "t3", "t4", "t5", "t6"];
    const suite = writeSuite(
      path.join(suites, "prompts"),
      Object.fromEntries(names.map((name) => [name, { check: "grep -qx done answer.txt" }])),
    );
    await writeFile(path.join(home, "careful.njk"), "You are careful. Workspace: {{ workspace }}");
    await writeFile(path.join(home, "sloppy.njk"), "You are sloppy. Workspace: {{ workspace }}");
    // Per task: the careful variant's trial, then the sloppy one's. Sloppy fails t1..t4, solves t5 and t6.
    for (const name of names) {
      mock.script(
        reply()
          .toolCall("terminal", { command: "echo done > answer.txt" })
          .expect((r) => assert.match(String(r.body.messages[0]?.content), /^You are careful\. Workspace: \//)),
        reply().text("Done."),
      );
      if (["t5", "t6"].includes(name)) shellThenDone(mock, "echo done > answer.txt");
      else {
        mock.script(
          reply()
            .text("Skipped.")
            .expect((r) => assert.match(String(r.body.messages[0]?.content), /^You are sloppy\./)),
        );
      }
    }
    const result = await runEval(["run", suite, "--prompt", "./careful.njk,./sloppy.njk", "--json"], {
      mockUrl: mock.url,
      home,
    });
    assert.equal(result.code, 0, result.stderr);
    mock.assertDone();
    const runId = runIdOf(result.stdout);
    const report = JSON.parse(
      (await runEval(["report", runId, "--json"], { mockUrl: mock.url, home })).stdout,
    ) as ReportJson;
    const [careful, sloppy] = report.variants.map((v) => v.variant);
    // Named as given (the template files), in the order given.
    assert.equal(careful, "mock-model+careful.njk");
    assert.equal(sloppy, "mock-model+sloppy.njk");
    assert.deepEqual(
      report.variants.map((v) => v.passed),
      [6, 2],
    );

    const worse = await runEval(["compare", `${runId}:${careful}`, `${runId}:${sloppy}`, "--fail-on-regression"], {
      mockUrl: mock.url,
      home,
    });
    assert.equal(worse.code, 1, worse.stdout + worse.stderr);
    // Titled in the order given: `crow eval compare A B` is "A vs B".
    assert.ok(worse.stdout.startsWith(`# ${runId}:${careful} vs ${runId}:${sloppy}\n`), worse.stdout);
    assert.match(worse.stdout, /Regressed \(passed in fewer of its trials in B than in A\): t1, t2, t3, t4/);
    assert.match(worse.stdout, /Fixed \(passed in more of its trials in B than in A\): none/);
    assert.match(worse.stdout, /REGRESSION/);

    const better = await runEval(
      ["compare", `${runId}:${sloppy}`, `${runId}:${careful}`, "--fail-on-regression", "--json"],
      {
        mockUrl: mock.url,
        home,
      },
    );
    assert.equal(better.code, 0, better.stderr);
    const comparison = JSON.parse(better.stdout) as { fixed: string[]; regressed: string[]; regression: boolean };
    assert.deepEqual(comparison.fixed, ["t1", "t2", "t3", "t4"]);
    assert.deepEqual(comparison.regressed, []);

    // The sessions record the prompt version they ran with.
    const store = await openStore(path.join(home, "crow.db"));
    try {
      const trial = (await store.evals.listTrials(runId)).find((t) => t.variant === sloppy);
      const session = await store.getSession(trial?.sessionId ?? "");
      assert.match(session?.promptId ?? "", /^system_prompt@\d+$/);
      assert.equal(session?.systemPrompt?.startsWith("You are sloppy."), true);
    } finally {
      await store.close();
    }
  });

  test("--model a,b: one variant per model, each trial's cost at its model's price", async () => {
    const pricedHome = await mkdtemp(path.join(tmpdir(), "crow-eval-priced-"));
    try {
      await writeFile(
        path.join(pricedHome, "config.yaml"),
        [
          "providers:",
          `  mock: { base_url: "${mock.url}" }`,
          "models:",
          "  cheap: { provider: mock, model: mock-model, price: { input: 1, output: 2 } }",
          "  dear: { provider: mock, model: mock-model, price: { input: 10, output: 20, currency: EUR } }",
          "default_model: cheap",
        ].join("\n"),
      );
      const suite = writeSuite(path.join(suites, "priced"), { solve: { check: "grep -qx yes answer.txt" } });
      mock.script(
        reply().toolCall("terminal", { command: "echo yes > answer.txt" }).usage(1000, 100),
        reply().text("Done.").usage(1000, 100),
        reply().text("No.").usage(1000, 100),
      );
      const options = {
        mockUrl: mock.url,
        home: pricedHome,
        env: { OPENAI_BASE_URL: undefined, CROW_MODEL: undefined },
      };
      const result = await runEval(["run", suite, "--model", "cheap,dear"], options);
      assert.equal(result.code, 0, result.stderr);
      mock.assertDone();
      const report = JSON.parse((await runEval(["report", runIdOf(result.stdout), "--json"], options)).stdout) as {
        variants: Array<{
          variant: string;
          passed: number;
          cost: number;
          costPerSolved: number | null;
          tokensPerSolved: number | null;
        }>;
      };
      const [cheap, dear] = report.variants;
      assert.equal(cheap?.variant, "cheap");
      assert.equal(cheap?.passed, 1);
      assert.equal(cheap?.cost.toFixed(6), ((2 * (1000 * 1 + 100 * 2)) / 1e6).toFixed(6));
      assert.equal(cheap?.costPerSolved?.toFixed(6), "0.002400");
      assert.equal(cheap?.tokensPerSolved, 2200);
      assert.equal(dear?.variant, "dear");
      assert.equal(dear?.passed, 0);
      assert.equal(dear?.cost.toFixed(6), ((1000 * 10 + 100 * 20) / 1e6).toFixed(6));
      assert.equal(dear?.costPerSolved, null);
    } finally {
      await rm(pricedHome, { recursive: true, force: true });
    }
  });

  test("an agent timeout and a crashing verifier are recorded, and the run goes on", async () => {
    const suite = writeSuite(path.join(suites, "failures"), {
      "a-slow": { agentTimeoutSec: 1, check: "true" },
      "b-crash": { verifier: "echo 'verifier exploded' >&2; exit 3" },
      "c-fine": { check: "true" },
    });
    mock.script(reply().hang());
    mock.script(reply().text("Done."));
    mock.script(reply().text("Done."));
    const result = await runEval(["run", suite], { mockUrl: mock.url, home });
    assert.equal(result.code, 0, result.stderr);
    mock.assertDone();
    const report = JSON.parse(
      (await runEval(["report", runIdOf(result.stdout), "--json"], { mockUrl: mock.url, home })).stdout,
    ) as ReportJson;
    const [slow, crash, fine] = report.trials;
    assert.equal(slow?.stopReason, "timeout");
    assert.match(slow?.error ?? "", /agent timed out after 1s/);
    assert.equal(crash?.reward, 0);
    assert.match(crash?.error ?? "", /verifier wrote no reward \(tests\/test\.sh exited with 3\): verifier exploded/);
    assert.equal(fine?.passed, true);
    assert.equal(fine?.error, null);
  });

  test("the agent finds no tests/ (nor solution/) in or around its workspace", async () => {
    const suite = writeSuite(path.join(suites, "hidden"), {
      peek: {
        check: "true",
        tests: { "secret.txt": "THE-EXPECTED-ANSWER\n" },
        solution: "echo THE-SOLUTION > out.txt",
      },
    });
    mock.script(
      reply().toolCall("terminal", {
        command:
          "ls -a . ..; cat tests/secret.txt ../tests/secret.txt ../solution/solve.sh; grep -r THE- .. 2>&1 | head",
      }),
      reply()
        .text("Nothing there.")
        .expect((r) => {
          const toolResult = JSON.stringify(r.body.messages.filter((m) => m.role === "tool"));
          assert.match(toolResult, /No such file or directory/);
          assert.doesNotMatch(toolResult, /THE-EXPECTED-ANSWER|THE-SOLUTION/);
        }),
    );
    const result = await runEval(["run", suite], { mockUrl: mock.url, home });
    assert.equal(result.code, 0, result.stderr);
    mock.assertDone();
  });

  test("bad input is refused with exit 2 and what to do, and records no run", async () => {
    const suite = writeSuite(path.join(suites, "input"), { only: { check: "true" } });
    const options = { mockUrl: mock.url, home };
    const runsBefore = (await runEval(["list"], options)).stdout;
    await writeFile(path.join(home, "broken.njk"), "You are {% if %} broken");
    const cases: Array<[string[], RegExp]> = [
      [["run", path.join(suites, "missing")], /suite .*missing is not a directory/],
      [["run", suite, "--model", "nope"], /--model nope: not a configured model \(configured: mock-model\)/],
      [["run", suite, "--prompt", "v99"], /--prompt v99: no such prompt version or template file/],
      [["run", suite, "--prompt", "./broken.njk"], /--prompt \.\/broken\.njk: /],
      [["run", suite, "--oracle", "--model", "mock-model"], /--oracle runs no model/],
      [["run", suite, "--trials", "0"], /--trials takes a whole number ≥ 1 \(got 0\)/],
      [["run", suite, "--bogus"], /unknown option --bogus/],
      [["report", "no-such-run"], /no eval run no-such-run in .*crow eval list shows the recent ones/],
      [["compare", "no-such-run"], /^crow eval: compare takes two runs/],
      [["report"], /^crow eval: report takes one RUN id/],
      [["status"], /^crow eval: status takes one RUN id/],
      [["run"], /^crow eval: run takes one SUITE directory \(see 'crow eval run --help'\)/],
      [["frobnicate"], /unknown command "frobnicate"/],
    ];
    for (const [args, message] of cases) {
      const result = await runEval(args, options);
      assert.equal(result.code, 2, `${args.join(" ")}: ${result.stderr}`);
      assert.match(result.stderr, message, args.join(" "));
      assert.doesNotMatch(result.stderr, /crow eval: crow eval/, args.join(" "));
    }
    // A bad CROW_EVAL_EXPOSE, and a machine where trials cannot be confined: said once, with one prefix.
    const exposed = await runEval(["run", suite], { ...options, env: { CROW_EVAL_EXPOSE: "relative/dir" } });
    assert.equal(exposed.code, 2, exposed.stderr);
    assert.match(exposed.stderr, /^crow eval: CROW_EVAL_EXPOSE entry relative\/dir is not an absolute path/);
    const noBwrap = await runEval(["run", suite], { ...options, env: { CROW_BWRAP: "/nonexistent/bwrap" } });
    assert.equal(noBwrap.code, 2, noBwrap.stderr);
    assert.match(
      noBwrap.stderr,
      /^crow eval: every trial runs in a sandbox, but bubblewrap \(bwrap\) is not installed\./,
    );
    assert.doesNotMatch(noBwrap.stderr, /sandbox: off/, "trials never run unconfined: no advice to turn it off");
    const help = await runEval(["run", "--help"], options);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /^Usage: crow eval run SUITE \[options\]/);
    const noProvider = await runEval(["run", suite], { ...options, env: { OPENAI_BASE_URL: undefined } });
    assert.equal(noProvider.code, 2);
    assert.match(noProvider.stderr, /No LLM provider configured/);
    assert.equal((await runEval(["list"], options)).stdout, runsBefore);
  });

  test("--oracle runs solution/solve.sh and the example suite passes 100 %", async () => {
    const requestsBefore = mock.requests.length;
    const result = await runEval(["run", path.join(REPO_ROOT, "examples", "eval"), "--oracle", "--concurrency", "3"], {
      mockUrl: mock.url,
      home,
    });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /\| oracle \| 6\/6 \| 100\.0 %/);
    assert.equal(mock.requests.length, requestsBefore, "the oracle asks no model");
  });
});
