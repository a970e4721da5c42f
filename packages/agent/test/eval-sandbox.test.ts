/**
 * `crow eval`'s trial environment, through the built binary with the scripted model: a task written for Harbor's
 * container paths (/app, /tests, /logs, /solution) passes by its oracle unchanged; the agent finds neither /tests,
 * /solution nor the suite's directory; a verifier running agent-written code, and a task script installing into the
 * system, change nothing outside the trial. Suites live under /var/tmp (outside /tmp, which the sandboxed shell sees
 * as a private directory anyway), so hiding them is the sandbox's doing.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { type CapturedRequest, type MockLlm, reply, startMockLlm } from "@crow/testkit";
import { runEval } from "./eval-helpers.js";

const toolResults = (request: CapturedRequest | undefined) =>
  (request?.body.messages ?? []).filter((m) => m.role === "tool").map((m) => String(m.content));

/** Writes one task in Harbor's layout, its scripts written for the container paths. */
async function harborTask(dir: string, files: Record<string, string>): Promise<string> {
  for (const [file, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await writeFile(path.join(dir, file), text);
  }
  return dir;
}

const HARBOR_TEST_SH = `#!/bin/bash
# As Terminal-Bench 2.0 writes them: the container's paths, the reward in /logs/verifier.
bash /tests/check.sh
if [ $? -eq 0 ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
`;

describe("crow eval: the trial sandbox", () => {
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

  test("a task written for /app, /tests, /logs and /solution passes by its oracle unchanged", async () => {
    const suite = path.join(suites, "harbor");
    await harborTask(path.join(suite, "hello"), {
      "instruction.md": "Write the greeting from /app/name.txt to /app/hello.txt.\n",
      "task.toml": 'version = "1.0"\n[verifier]\ntimeout_sec = 60.0\n',
      "environment/name.txt": "world\n",
      "tests/test.sh": HARBOR_TEST_SH,
      "tests/check.sh": '[ "$(pwd)" = /app ] && [ "$(cat /app/hello.txt)" = "hello $(cat /app/name.txt)" ]\n',
      "solution/solve.sh": '#!/bin/bash\necho "hello $(cat /app/name.txt)" > /app/hello.txt\n',
    });
    const result = await runEval(["run", suite, "--oracle", "--json"], { mockUrl: mock.url, home });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /"passed":true/);
  });

  test("the agent finds no /tests, no /solution and nothing of the suite; it writes /app with its tools", async () => {
    const suite = path.join(suites, "peek");
    const task = await harborTask(path.join(suite, "peek"), {
      "instruction.md": "Write yes to /app/answer.txt.\n",
      "tests/test.sh": HARBOR_TEST_SH,
      "tests/check.sh": "grep -qx yes /app/answer.txt\n",
      "solution/solve.sh": "echo yes > /app/answer.txt\n",
    });
    const solve = path.join(task, "solution", "solve.sh");
    const note = path.join(outside, "note.txt");
    await writeFile(note, "another project's note\n");
    const root = process.geteuid?.() === 0;
    mock.script(
      reply().toolCall("terminal", {
        command: `ls /tests /solution /logs 2>&1; ls -A ${suite} | wc -l; cat ${solve} ${task}/tests/check.sh 2>&1`,
      }),
      reply().toolCall("read", { file_path: solve }),
      reply().toolCall("read", { file_path: note }),
      // As root, what other users may not read is hidden from a trial (image-secrets.ts); otherwise it is unreadable.
      reply().toolCall("read", { file_path: root ? "/etc/shadow" : note }),
      reply().toolCall("write", { file_path: "/app/answer.txt", content: "yes\n" }),
      reply().toolCall("terminal", { command: "cat /app/answer.txt; pwd" }),
      reply().text("Done."),
    );
    const result = await runEval(["run", suite, "--json"], { mockUrl: mock.url, home });
    assert.equal(result.code, 0, result.stderr);
    mock.assertDone();
    const [peek, read, outsideRead, privateRead, , check] = toolResults(mock.requests.at(-1));
    assert.match(peek ?? "", /ls: cannot access '\/tests': No such file or directory/);
    assert.match(peek ?? "", /ls: cannot access '\/solution': No such file or directory/);
    assert.match(peek ?? "", /ls: cannot access '\/logs': No such file or directory/);
    assert.match(peek ?? "", /^0$/m, "the suite's directory looks empty");
    assert.doesNotMatch(peek ?? "", /echo yes|grep -qx/);
    assert.match(read ?? "", /was not read/);
    assert.doesNotMatch(read ?? "", /echo yes/);
    // The refusals say why these are hidden: out of the trial's view, or private on the host; not Crow's own files.
    for (const refused of [read, outsideRead, privateRead]) {
      assert.match(refused ?? "", /was not read/);
      assert.doesNotMatch(refused ?? "", /Crow's own files|provider keys|another project's note/);
    }
    assert.match(read ?? "", /it is outside what this sandbox shows/);
    assert.match(outsideRead ?? "", /it is outside what this sandbox shows/);
    if (root) assert.match(privateRead ?? "", /other users may not read it on the host/);
    assert.match(check ?? "", /^yes$/m, "the write tool's /app is the shell's /app");
    assert.match(result.stdout, /"passed":true/, "and the verifier's");
  });

  test("agent code the verifier runs is confined to the trial: nothing outside is written", async () => {
    const suite = path.join(suites, "plant");
    // Written with the EVAL_* variables, so that it runs the same with or without the container paths.
    await harborTask(path.join(suite, "plant"), {
      "instruction.md": "Write helper.sh.\n",
      "tests/test.sh": `#!/bin/bash
LOGS="\${EVAL_LOGS_DIR:-/logs}"
source "\${EVAL_APP_DIR:-/app}/helper.sh"
if [ "$(answer)" = 42 ]; then echo 1 > "$LOGS/verifier/reward.txt"; else echo 0 > "$LOGS/verifier/reward.txt"; fi
`,
    });
    // The planted helper answers wrong and writes outside the trial.
    const helper = [
      `echo planted > ${outside}/from-verifier`,
      `echo planted > ${home}/from-verifier`,
      "answer() { echo 41; }",
    ].join("\n");
    mock.script(
      reply().toolCall("terminal", { command: `cat > helper.sh <<'EOF'\n${helper}\nEOF` }),
      reply().text("Done."),
    );
    const result = await runEval(["run", suite, "--json"], { mockUrl: mock.url, home });
    assert.equal(result.code, 0, result.stderr);
    mock.assertDone();
    assert.match(result.stdout, /"reward":0/);
    assert.equal(existsSync(path.join(outside, "from-verifier")), false);
    assert.equal(existsSync(path.join(home, "from-verifier")), false);
  });

  test("a task script that installs into the system (apt-get, /usr/local, /etc) does not change the host", async () => {
    const suite = path.join(suites, "install");
    const marker = `crow-eval-probe-${path.basename(outside)}`;
    await harborTask(path.join(suite, "install"), {
      "instruction.md": "Nothing.\n",
      "tests/test.sh": [
        "#!/bin/bash",
        "apt-get install -y --no-download crow-eval-no-such-package >/dev/null 2>&1",
        `touch /usr/local/bin/${marker} /etc/${marker} /var/lib/dpkg/${marker} 2>/dev/null`,
        `touch ~/${marker} /tmp/${marker}`,
        `mount -o remount,rw / 2>/dev/null && touch /usr/local/bin/${marker}`,
        "echo 1 > /logs/verifier/reward.txt",
      ].join("\n"),
      "solution/solve.sh": "true\n",
    });
    const result = await runEval(["run", suite, "--oracle", "--json"], { mockUrl: mock.url, home });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /"passed":true/);
    for (const dir of ["/usr/local/bin", "/etc", "/var/lib/dpkg", tmpdir(), process.env.HOME ?? "/root"]) {
      assert.equal(existsSync(path.join(dir, marker)), false, `${dir}/${marker} was written on the host`);
    }
  });
});
