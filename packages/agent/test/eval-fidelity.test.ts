/**
 * `crow eval` as close to Harbor's container as a trial without Docker gets, through the built binary with small
 * tasks made here: a writable /tests for each verifier run, the setup's output kept whole (its early cause too) and
 * shown by `report --trial`.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { openStore } from "@crow/core";
import { type CapturedRequest, type MockLlm, reply, startMockLlm } from "@crow/testkit";
import { files, REWARD_IF, runEval, runIdOf, trialOf } from "./eval-helpers.js";

const toolResults = (request: CapturedRequest | undefined) =>
  (request?.body.messages ?? []).filter((m) => m.role === "tool").map((m) => String(m.content));

/** The one trial event of a `--json` run. */
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

  test("the agent's shell and file tools start in /app, and the prompt template's workspace is /app", async () => {
    const suite = path.join(suites, "starts-in-app");
    await files(path.join(suite, "pwd"), {
      "instruction.md": "Say where you are.\n",
      "tests/test.sh": "echo 1 > /logs/verifier/reward.txt\n",
    });
    const prompt = path.join(suites, "prompt.md");
    await writeFile(prompt, "You work in {{ workspace }}.\n");
    mock.script(
      reply().toolCall("terminal", { command: "pwd" }),
      reply().toolCall("write", { file_path: "relative.txt", content: "written relative\n" }),
      reply().toolCall("read", { file_path: "relative.txt" }),
      reply().toolCall("terminal", { command: "cat /app/relative.txt" }),
      reply().text("Done."),
    );
    const result = await runEval(["run", suite, "--prompt", prompt, "--json"], { mockUrl: mock.url, home });
    assert.equal(result.code, 0, result.stderr);
    mock.assertDone();
    const [pwd, , read, cat] = toolResults(mock.requests.at(-1));
    assert.match(pwd ?? "", /^\/app$/m);
    // The file tools' relative paths are the shell's: /app.
    assert.match(read ?? "", /written relative/);
    assert.match(cat ?? "", /^written relative$/m);
    assert.match(String(mock.requests.at(-1)?.body.messages[0]?.content), /^You work in \/app\.$/m);
  });

  test("the default system prompt names /app (or the WORKDIR), never the trial's host path", async () => {
    const suite = path.join(suites, "default-prompt");
    await files(path.join(suite, "plain"), {
      "instruction.md": "Nothing to do.\n",
      "environment/notes.txt": "a file the tree shows\n",
      "tests/test.sh": "echo 1 > /logs/verifier/reward.txt\n",
    });
    await files(path.join(suite, "workdir"), {
      "instruction.md": "Nothing to do.\n",
      "environment/Dockerfile": "FROM ubuntu:24.04\nWORKDIR /app/src\n",
      "tests/test.sh": "echo 1 > /logs/verifier/reward.txt\n",
    });
    mock.script(reply().text("Done."), reply().text("Done."));
    const result = await runEval(["run", suite, "--json"], { mockUrl: mock.url, home });
    assert.equal(result.code, 0, result.stderr);
    mock.assertDone();
    const prompts = mock.requests.slice(-2).map((request) => String(request.body.messages[0]?.content));
    assert.equal(prompts.length, 2);
    for (const prompt of prompts) {
      assert.doesNotMatch(prompt, /crow-eval-|\/tmp\//, "no host path of the trial's workspace");
    }
    const plain = prompts.find((prompt) => prompt.includes("notes.txt"));
    assert.ok(plain, prompts.join("\n---\n"));
    assert.match(plain, /^Workspace: \/app \(/m);
    assert.match(plain, /^Tree:\n\/app\/\n {2}notes\.txt$/m);
    const workdir = prompts.find((prompt) => prompt !== plain);
    assert.match(workdir ?? "", /^Workspace: \/app\/src \(/m);
    assert.match(workdir ?? "", /^Tree:\n\/app\/\n {2}src\/$/m, "the tree is /app's, from its root");
  });

  test("nothing to peek at: a copy of the solution elsewhere on disk is out of the agent's and the scripts' reach", async () => {
    // Copies of the suite's answer where a person or another checkout might keep them.
    // /srv only where the tests may write there (as root, as CI runs them); /var/tmp everywhere.
    const srv = await mkdtemp("/srv/crow-eval-peek-").catch(() => undefined);
    const planted = [...(srv ? [srv] : []), await mkdtemp("/var/tmp/crow-eval-peek-")];
    try {
      for (const dir of planted) await files(dir, { "other-suite/peek/solution/solve.sh": "echo the-answer\n" });
      const suite = path.join(suites, "peek");
      const solve = path.join(planted[0] ?? "", "other-suite", "peek", "solution", "solve.sh");
      const search =
        "find / \\( -path /proc -o -path /sys -o -path /usr -o -path /dev \\) -prune -o -name solve.sh -print 2>/dev/null";
      await files(path.join(suite, "peek"), {
        "instruction.md": "Write the answer to /app/answer.txt.\n",
        "tests/test.sh": `#!/bin/bash\necho "verifier found: $(${search} | tr '\\n' ' ')"\nls /srv /var/tmp /home /work 2>&1\necho 1 > /logs/verifier/reward.txt\n`,
        "solution/solve.sh": `#!/bin/bash\necho "oracle found: $(${search} | tr '\\n' ' ')" > /app/found.txt\n`,
      });
      mock.script(
        reply().toolCall("terminal", { command: `${search}; ls -A /srv /var/tmp /home /root /work 2>&1 | head -50` }),
        reply().toolCall("read", { file_path: solve }),
        reply().toolCall("terminal", {
          command: `cat ${planted.map((d) => `${d}/other-suite/peek/solution/solve.sh`).join(" ")} 2>&1`,
        }),
        reply().text("Done."),
      );
      const agent = await runEval(["run", suite, "--json"], { mockUrl: mock.url, home });
      assert.equal(agent.code, 0, agent.stderr);
      mock.assertDone();
      const [look, read, cat] = toolResults(mock.requests.at(-1));
      assert.doesNotMatch(look ?? "", /solve\.sh/, "the agent's shell found a solution");
      assert.doesNotMatch(look ?? "", /crow-eval-peek|crow-eval-suites|other-suite/);
      assert.doesNotMatch(read ?? "", /the-answer/);
      assert.doesNotMatch(cat ?? "", /the-answer/);
      const verifierOutput = String(trialOf(agent.stdout).details?.verifierOutput ?? "");
      assert.match(verifierOutput, /^verifier found: *$/m, "the verifier found a solution");
      assert.doesNotMatch(verifierOutput, /crow-eval-peek|crow-eval-suites/);

      const oracle = await runEval(["run", suite, "--oracle", "--json", "--keep-workspaces"], {
        mockUrl: mock.url,
        home,
      });
      assert.equal(oracle.code, 0, oracle.stderr);
      const kept = /kept (\S+)/.exec(oracle.stderr)?.[1] ?? "";
      try {
        // The oracle sees its own /solution and nothing else.
        assert.equal(
          readFileSync(path.join(kept, "app", "found.txt"), "utf8").trim(),
          "oracle found: /solution/solve.sh",
        );
      } finally {
        await rm(kept, { recursive: true, force: true });
      }
    } finally {
      for (const dir of planted) await rm(dir, { recursive: true, force: true });
    }
  });

  test("COPY with wildcards and ADD of a local tar archive do what Docker does", async () => {
    const suite = path.join(suites, "copy-forms");
    const task = path.join(suite, "forms");
    await files(task, {
      "instruction.md": "Nothing.\n",
      "environment/Dockerfile":
        "FROM ubuntu:24.04\nWORKDIR /app\nCOPY src/*.py ./py/\nADD data.tar.gz /app/data/\nADD src/c.txt /app/c.txt\n",
      "environment/src/a.py": "a\n",
      "environment/src/b.py": "b\n",
      "environment/src/c.txt": "c\n",
      "environment/archive/inner/x.txt": "x\n",
      "solution/solve.sh": "true\n",
      "tests/test.sh": REWARD_IF(
        '[ -f /app/py/a.py ] && [ -f /app/py/b.py ] && [ ! -e /app/py/c.txt ] && [ "$(cat /app/data/inner/x.txt)" = x ] && [ -f /app/c.txt ] && [ ! -e /app/data.tar.gz ]',
      ),
    });
    execFileSync("tar", [
      "-czf",
      path.join(task, "environment", "data.tar.gz"),
      "-C",
      path.join(task, "environment", "archive"),
      "inner",
    ]);
    await rm(path.join(task, "environment", "archive"), { recursive: true });
    const result = await runEval(["run", suite, "--oracle", "--json"], { mockUrl: mock.url, home });
    assert.equal(result.code, 0, `${result.stdout}\n${result.stderr}`);
    assert.match(result.stdout, /"passed":true/);
  });
});
