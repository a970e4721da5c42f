/**
 * `crow eval` run by an unprivileged user (`nobody`, through setpriv; skipped only when the tests do not run as root,
 * as the other nobody runs): the trial sandbox confines as it does for root. The verifier, the oracle and the agent's
 * shell write where that user may write outside the trial — a directory of its own, its home, the host's /tmp — and
 * nothing lands there; the trial's own paths (/app, /logs/verifier) work.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { type CapturedRequest, type MockLlm, reply, startMockLlm } from "@crow/testkit";
import { runEval } from "./eval-helpers.js";

const NOBODY = 65534;
const asRoot = process.getuid?.() === 0;

const toolResults = (request: CapturedRequest | undefined) =>
  (request?.body.messages ?? []).filter((m) => m.role === "tool").map((m) => String(m.content));

describe("crow eval as an unprivileged user", { skip: asRoot ? undefined : "setpriv needs root" }, () => {
  let mock: MockLlm;
  let base: string;
  let home: string;
  let suite: string;
  /** Writable by nobody, outside every trial. */
  let outside: string;
  before(async () => {
    mock = await startMockLlm();
    // Under /var/tmp: the host's /tmp is a private one in the sandbox anyway; this one must be hidden by the walls.
    base = await mkdtemp("/var/tmp/crow-eval-nobody-");
    home = path.join(base, "home");
    suite = path.join(base, "suite");
    outside = path.join(base, "outside");
    for (const dir of [home, suite, outside]) await mkdir(dir);
  });
  after(async () => {
    await mock.close();
    await rm(base, { recursive: true, force: true });
  });

  test("the verifier, the oracle and the agent's shell write nothing outside their trial", async () => {
    const attempt = (who: string) =>
      [
        `echo ${who} > ${outside}/from-${who}`,
        `echo ${who} > ${home}/from-${who}`,
        `echo ${who} > /var/tmp/crow-eval-nobody-${who}-$$`,
      ].join("; ");
    const task = path.join(suite, "confined");
    await mkdir(path.join(task, "tests"), { recursive: true });
    await mkdir(path.join(task, "solution"), { recursive: true });
    await writeFile(path.join(task, "instruction.md"), "Write 42 to /app/answer.txt.\n");
    await writeFile(
      path.join(task, "solution", "solve.sh"),
      `#!/bin/bash\n${attempt("oracle")} 2>/dev/null\necho 42 > /app/answer.txt\n`,
    );
    await writeFile(
      path.join(task, "tests", "test.sh"),
      `#!/bin/bash\n${attempt("verifier")} 2>/dev/null\n` +
        'if [ "$(cat /app/answer.txt)" = 42 ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi\n',
    );
    execFileSync("chown", ["-R", `${NOBODY}:${NOBODY}`, home, outside]);
    execFileSync("chmod", ["-R", "a+rX", base]);
    const oracle = await runEval(["run", suite, "--oracle", "--json"], { mockUrl: mock.url, home, uid: NOBODY });
    assert.equal(oracle.code, 0, oracle.stderr);
    assert.match(oracle.stdout, /"passed":true/);

    mock.script(
      reply().toolCall("terminal", { command: `id -u; ${attempt("agent")}; echo 42 > /app/answer.txt` }),
      reply().text("Done."),
    );
    const agent = await runEval(["run", suite, "--json"], { mockUrl: mock.url, home, uid: NOBODY });
    assert.equal(agent.code, 0, agent.stderr);
    mock.assertDone();
    assert.match(agent.stdout, /"passed":true/);
    const [shell] = toolResults(mock.requests.at(-1));
    assert.match(shell ?? "", new RegExp(`^${NOBODY}$`, "m"), "the agent's shell ran as nobody");
    assert.match(shell ?? "", /(Read-only file system|Permission denied|No such file or directory)/);

    for (const who of ["oracle", "verifier", "agent"]) {
      assert.equal(existsSync(path.join(outside, `from-${who}`)), false, `${who} wrote outside its trial`);
      assert.equal(existsSync(path.join(home, `from-${who}`)), false, `${who} wrote in the user's home`);
    }
    const leaked = execFileSync("find", ["/var/tmp", "-maxdepth", "1", "-name", "crow-eval-nobody-*-*"], {
      encoding: "utf8",
    });
    assert.equal(leaked.trim(), "", "a script wrote in the host's /var/tmp");
  });
});
