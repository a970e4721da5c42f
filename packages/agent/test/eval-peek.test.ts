/**
 * Nothing to peek at, the angles eval-fidelity.test.ts does not take: an agent whose shell and file tools look for a
 * copy of the task's `solution/solve.sh` kept in the host's /tmp (where other trials' workspaces live too), in the
 * user's home, through /proc (another process's cwd or root, crow-mcp's own), and through the descriptors its shell
 * inherited — and cannot find it. Through the built binary with the scripted model; suites under /var/tmp.
 */
import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { homedir, tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { type CapturedRequest, type MockLlm, reply, startMockLlm } from "@crow/testkit";
import { files, runEval } from "./eval-helpers.js";

const toolResults = (request: CapturedRequest | undefined) =>
  (request?.body.messages ?? []).filter((m) => m.role === "tool").map((m) => String(m.content));

const ANSWER = "the-answer-42";

describe("crow eval: an agent looking for the answer elsewhere finds nothing", () => {
  let mock: MockLlm;
  let home: string;
  let suites: string;
  const planted: string[] = [];
  before(async () => {
    mock = await startMockLlm();
    home = await mkdtemp(path.join(tmpdir(), "crow-eval-home-"));
    suites = await mkdtemp("/var/tmp/crow-eval-suites-");
    // The host's /tmp, shaped as another trial's workspace (its verifier's /tests copy and its /app), and the
    // user's real home (not Crow's, which the tests make HOME and which is hidden whatever).
    const hostTmp = await mkdtemp(path.join(tmpdir(), "crow-eval-peekA-"));
    planted.push(hostTmp);
    await files(hostTmp, { "tests/solve.sh": `echo ${ANSWER}\n`, "app/solve.sh": `echo ${ANSWER}\n` });
    const realHome = homedir();
    if (!realHome.startsWith(tmpdir()) && realHome !== home) {
      const inHome = await mkdtemp(path.join(realHome, ".crow-eval-peek-")).catch(() => undefined);
      if (inHome) {
        planted.push(inHome);
        await files(inHome, { "checkout/peek/solution/solve.sh": `echo ${ANSWER}\n` });
      }
    }
    const varTmp = await mkdtemp("/var/tmp/crow-eval-peek-");
    planted.push(varTmp);
    await files(varTmp, { "checkout/peek/solution/solve.sh": `echo ${ANSWER}\n` });
  });
  after(async () => {
    await mock.close();
    await rm(home, { recursive: true, force: true });
    await rm(suites, { recursive: true, force: true });
    for (const dir of planted) await rm(dir, { recursive: true, force: true });
  });

  test("not in the host's /tmp, the home, through /proc or an inherited descriptor: shell and file tools alike", async () => {
    const suite = path.join(suites, "peek");
    await files(path.join(suite, "peek"), {
      "instruction.md": "Write the answer to /app/answer.txt.\n",
      "tests/test.sh": "#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n",
      "solution/solve.sh": `#!/bin/bash\necho ${ANSWER} > /app/answer.txt\n`,
    });
    const [hostTmp, ...others] = planted;
    const targets = [
      `${hostTmp}/tests/solve.sh`,
      `${hostTmp}/app/solve.sh`,
      ...others.map((d) => `${d}/checkout/peek/solution/solve.sh`),
    ];
    // Every descriptor the shell holds, followed as a directory; every process's cwd and root.
    const throughProc = [
      'for f in /proc/self/fd/* /proc/$$/fd/*; do ls -la "$f"/ 2>/dev/null; done',
      "for p in /proc/[0-9]*; do ls $p/cwd/ $p/root/ 2>/dev/null; done",
      ...targets.map((t) => `cat /proc/1/root${t} /proc/$PPID/root${t} 2>&1`),
    ].join("; ");
    mock.script(
      reply().toolCall("terminal", {
        command: `ls -A ${tmpdir()} ${homedir()} 2>&1; cat ${targets.join(" ")} 2>&1; grep -rs 'the-answer-4[2]' /tmp /var/tmp ${homedir()} 2>&1 | head`,
      }),
      reply().toolCall("terminal", { command: throughProc }),
      ...targets.map((t) => reply().toolCall("read", { file_path: t })),
      ...targets.map((t) => reply().toolCall("read", { file_path: `/proc/self/root${t}` })),
      reply().toolCall("read", { file_path: "/proc/self/cwd" }),
      reply().text("Done."),
    );
    const run = await runEval(["run", suite, "--json"], { mockUrl: mock.url, home });
    assert.equal(run.code, 0, run.stderr);
    mock.assertDone();
    const results = toolResults(mock.requests.at(-1));
    assert.equal(results.length, 3 + 2 * targets.length);
    for (const [index, result] of results.entries()) {
      assert.doesNotMatch(result, new RegExp(ANSWER), `tool result #${index + 1} shows the answer:\n${result}`);
      // A planted copy's name only in a refusal or a "no such file" about the path the model gave, never listed.
      const listed = result
        .split("\n")
        .filter((line) => !/No such file|cannot access|Permission denied|was not read|Not a directory/.test(line));
      assert.doesNotMatch(listed.join("\n"), /crow-eval-peek/, `tool result #${index + 1} lists a copy:\n${result}`);
    }
  });

  test("the host's other top-level folders are absent for the agent's shell, as for the scripts: not even a name", async () => {
    // What a trial shows of `/` (trial-view.ts), its own paths, and links (shown as the links they are).
    const shown = new Set(["usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "etc", "opt", "sys", "var"]);
    for (const own of ["proc", "dev", "tmp", "run", "app", "logs", "tests", "solution", ".crow-eval"]) shown.add(own);
    const unseen = readdirSync("/", { withFileTypes: true })
      .filter((e) => !e.isSymbolicLink() && !shown.has(e.name))
      .map((e) => e.name);
    const suite = path.join(suites, "root");
    await files(path.join(suite, "root"), {
      "instruction.md": "Look around.\n",
      "tests/test.sh": "#!/bin/bash\nls -A / | tr '\\n' ' '; echo\necho 1 > /logs/verifier/reward.txt\n",
    });
    mock.script(reply().toolCall("terminal", { command: "ls -A / | tr '\\n' ' '" }), reply().text("Done."));
    const run = await runEval(["run", suite, "--json"], { mockUrl: mock.url, home });
    assert.equal(run.code, 0, run.stderr);
    const [listing] = toolResults(mock.requests.at(-1));
    const verifier = /"verifierOutput":"([^"]*)"/.exec(run.stdout)?.[1] ?? "";
    for (const name of unseen) {
      assert.doesNotMatch(listing ?? "", new RegExp(`(^| )${name}( |$)`), `the agent's shell lists /${name}`);
      assert.doesNotMatch(verifier, new RegExp(`(^| )${name}( |$)`), `the verifier lists /${name}`);
    }
    assert.match(listing ?? "", /(^| )usr( |$)/);
  });
});
