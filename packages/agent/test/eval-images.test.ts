/**
 * `crow eval` standing in for a task's image, through the built binary with small tasks made here: a python image's
 * trial has `python` and `pip` (in every script and the agent's shell; other images do not get them), and the
 * Dockerfile's package installs are judged where the scripts run — with the python3 and PATH the trial has, not the
 * ones of the shell that started `crow eval` (a python3 in a home the trial does not see claims everything here) —
 * an exact pip pin included, and a Debian package counted by its command when dpkg does not know it (npm from a
 * vendor's nodejs).
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { type CapturedRequest, type MockLlm, reply, startMockLlm } from "@crow/testkit";
import { files, REWARD_IF, runEval } from "./eval-helpers.js";

const toolResults = (request: CapturedRequest | undefined) =>
  (request?.body.messages ?? []).filter((m) => m.role === "tool").map((m) => String(m.content));

describe("crow eval: what stands in for a task's image", () => {
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

  test("a python image's trial has python and pip in setup, oracle, verifier and the agent's shell", async () => {
    const suite = path.join(suites, "python");
    await files(path.join(suite, "py"), {
      "instruction.md": "Compute.\n",
      "environment/Dockerfile":
        "FROM python:3.13-slim-bookworm\nWORKDIR /app\nRUN python -c 'print(6*7)' > setup.txt\n",
      "solution/solve.sh":
        "#!/bin/bash\npython -c \"print(open('/app/setup.txt').read().strip())\" > /app/a\npip --version > /app/pip.txt\n",
      "tests/test.sh": REWARD_IF(`[ "$(python -c 'print(40+2)')" = "$(cat /app/a)" ] && grep -q '^pip ' /app/pip.txt`),
    });
    await files(path.join(suite, "plain"), {
      "instruction.md": "Compute.\n",
      "environment/Dockerfile": "FROM ubuntu:24.04\nWORKDIR /app\n",
      "solution/solve.sh": "true\n",
      "tests/test.sh": REWARD_IF("! command -v /.crow-eval/bin/python"),
    });
    // A pyenv-like python3 first on crow eval's PATH, under /tmp: the trial has a /tmp of its own, so `python` must
    // not point there (it did: "python: command not found" in every script).
    const shimDir = await mkdtemp(path.join(tmpdir(), "crow-eval-pyshim-"));
    await files(shimDir, { python3: '#!/bin/sh\nexec /usr/bin/python3 "$@"\n' });
    await chmod(path.join(shimDir, "python3"), 0o755);
    const oracle = await runEval(["run", suite, "--oracle", "--json"], {
      mockUrl: mock.url,
      home,
      env: { PATH: `${shimDir}${path.delimiter}${process.env.PATH}` },
    }).finally(() => rm(shimDir, { recursive: true, force: true }));
    assert.equal(oracle.code, 0, `${oracle.stdout}\n${oracle.stderr}`);
    assert.equal(oracle.stdout.match(/"passed":true/g)?.length, 2, oracle.stdout);
    assert.match(oracle.stdout, /FROM python:3\.13-slim-bookworm \(the host's tools; python → \S*python3/);
    assert.ok(!oracle.stdout.includes(`python → ${shimDir}`), oracle.stdout);

    mock.script(
      reply().toolCall("terminal", {
        command: "python -c 'print(20+22)' > /app/a; pip --version > /app/pip.txt; cat /app/a",
      }),
      reply().text("Done."),
    );
    const agent = await runEval(["run", suite, "--tasks", "py", "--json"], { mockUrl: mock.url, home });
    assert.equal(agent.code, 0, agent.stderr);
    mock.assertDone();
    assert.match(toolResults(mock.requests.at(-1))[0] ?? "", /^42$/m);
    assert.match(agent.stdout, /"passed":true/);
  });

  test("package installs are judged with the trial's python3 and PATH: a python3 the trial cannot see does not count", async () => {
    // A python3 first on crow eval's PATH, in a directory trials do not see, that claims every distribution.
    const liar = path.join(home, "bin");
    await mkdir(liar, { recursive: true });
    await writeFile(path.join(liar, "python3"), "#!/bin/sh\nexit 0\n");
    await chmod(path.join(liar, "python3"), 0o755);
    const pip = spawnSync("/usr/bin/python3", ["-c", "import importlib.metadata as m; print(m.version('pip'))"], {
      encoding: "utf8",
    }).stdout.trim();
    const suite = path.join(suites, "checks");
    const task = (install: string) => ({
      "instruction.md": "x\n",
      "environment/Dockerfile": `FROM ubuntu:24.04\nWORKDIR /app\nRUN ${install}\n`,
      "solution/solve.sh": "true\n",
      "tests/test.sh": "echo 1 > /logs/verifier/reward.txt\n",
    });
    await files(path.join(suite, "hidden-python"), task("pip install crow-eval-no-such-dist"));
    await files(path.join(suite, "pin-wrong"), task("pip install pip==0.0.1"));
    if (pip) await files(path.join(suite, "pin-right"), task(`pip install pip==${pip}`));
    const npm = existsSync("/usr/bin/npm");
    if (npm) await files(path.join(suite, "npm"), task("apt-get update && apt-get install -y npm"));
    const result = await runEval(["run", suite, "--oracle", "--json"], {
      mockUrl: mock.url,
      home,
      env: { PATH: `${liar}:${process.env.PATH ?? ""}` },
    });
    assert.match(
      result.stderr,
      /hidden-python: skipped: needs the image: pip package\(s\) not in the trial's python3: crow-eval-no-such-dist/,
    );
    assert.match(result.stderr, /pin-wrong: skipped: .*pip==0\.0\.1 \(has /);
    if (pip) assert.doesNotMatch(result.stderr, /pin-right: skipped/);
    if (npm) assert.doesNotMatch(result.stderr, /npm: skipped/, "npm is a command here, though dpkg has no npm");
    assert.equal(result.code, 0, `${result.stdout}\n${result.stderr}`);
  });

  test("CROW_EVAL_EXPOSE shows a tool out of view to every trial, read-only; a bad entry stops the run, named", async () => {
    // Under /var/tmp, which trials do not see (a home would do as well; here the home is Crow's, hidden whatever).
    const tools = path.join(suites, "tools");
    await mkdir(path.join(tools, "bin"), { recursive: true });
    await writeFile(path.join(tools, "bin", "crow-eval-hello"), "#!/bin/sh\necho hello from the home\n");
    await chmod(path.join(tools, "bin", "crow-eval-hello"), 0o755);
    const suite = path.join(suites, "exposed");
    await files(path.join(suite, "hello"), {
      "instruction.md": "Say hello.\n",
      "solution/solve.sh": "crow-eval-hello > /app/said.txt\n",
      "tests/test.sh": REWARD_IF(
        `[ "$(crow-eval-hello)" = "hello from the home" ] && ! touch ${tools}/written 2>/dev/null`,
      ),
    });
    const env = { PATH: `${tools}/bin:${process.env.PATH ?? ""}` };
    const hidden = await runEval(["run", suite, "--oracle", "--json"], { mockUrl: mock.url, home, env });
    assert.match(hidden.stdout, /"passed":false/, "without it the home's tools are out of view");
    const shown = await runEval(["run", suite, "--oracle", "--json"], {
      mockUrl: mock.url,
      home,
      env: { ...env, CROW_EVAL_EXPOSE: tools },
    });
    assert.equal(shown.code, 0, `${shown.stdout}\n${shown.stderr}`);
    assert.match(shown.stdout, /"passed":true/);
    mock.script(reply().toolCall("terminal", { command: "crow-eval-hello" }), reply().text("Done."));
    const agent = await runEval(["run", suite, "--json"], {
      mockUrl: mock.url,
      home,
      env: { ...env, CROW_EVAL_EXPOSE: tools },
    });
    assert.equal(agent.code, 0, agent.stderr);
    mock.assertDone();
    assert.match(toolResults(mock.requests.at(-1))[0] ?? "", /hello from the home/);
    const bad = await runEval(["run", suite, "--oracle"], {
      mockUrl: mock.url,
      home,
      env: { CROW_EVAL_EXPOSE: "relative/dir" },
    });
    assert.equal(bad.code, 2, bad.stderr);
    assert.match(bad.stderr, /CROW_EVAL_EXPOSE entry relative\/dir is not an absolute path/);
  });
});
