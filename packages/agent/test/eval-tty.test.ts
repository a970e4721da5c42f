/**
 * `crow eval run` on a terminal (a real PTY): one progress line redrawn in place with done/total, passed, cost and
 * ETA, then the report.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { CROW_BIN, type MockLlm, reply, startMockLlm } from "@crow/testkit";
import { spawn as spawnPty } from "@lydell/node-pty";
import { writeSuite } from "./eval-helpers.js";
import { runEnv } from "./run-helpers.js";

let mock: MockLlm;
let home: string;
before(async () => {
  mock = await startMockLlm();
  home = await mkdtemp(path.join(tmpdir(), "crow-eval-tty-"));
});
after(async () => {
  await mock.close();
  await rm(home, { recursive: true, force: true });
});

test("on a terminal a progress line shows done/total, passed, cost and ETA, then the report", async () => {
  const suite = writeSuite(path.join(home, "suite"), {
    good: { check: "true" },
    bad: { check: "false" },
  });
  mock.script(reply().text("Done."), reply().text("Done."));
  const pty = spawnPty(process.execPath, [CROW_BIN, "eval", "run", suite], {
    name: "xterm-256color",
    cols: 120,
    rows: 40,
    cwd: home,
    env: { ...runEnv(mock.url, home), TERM: "xterm-256color" },
  });
  let output = "";
  pty.onData((data) => {
    output += data;
  });
  const code = await new Promise<number>((resolve) => pty.onExit(({ exitCode }) => resolve(exitCode)));
  assert.equal(code, 0, output);
  // Each frame clears the line and redraws it: the last one says all is done.
  const frames = output.split("\r\x1b[2K").slice(1);
  assert.match(frames[0] ?? "", /^\[\.{24}\] 0\/2 {2}passed 0 {2}cost – {2}ETA \?/);
  // No price is configured for the mock model: the cost says it is unknown rather than 0.
  assert.match(frames.at(-1) ?? "", /^\[#{24}\] 2\/2 {2}passed 1 {2}cost – {2}ETA 0s\r?\n/);
  assert.match(output, /\| mock-model \| 1\/2 \| 50\.0 %/);
  mock.assertDone();
});
