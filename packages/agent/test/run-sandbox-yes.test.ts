/**
 * `crow run --yes` approves what ask mode and rules ask, but never runs a command outside the sandbox on its own: that
 * question (offered after the sandbox blocked a command) is left to a person, and refused when nobody is at a
 * terminal. Runs on real bubblewrap (CI installs it).
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import path from "node:path";
import { describe, test } from "node:test";
import { reply, textReply } from "@crow/testkit";
import { runCrow, runEnv, useRunFixture } from "./run-helpers.js";

describe("crow run --yes and the sandbox", { timeout: 120_000 }, () => {
  const fx = useRunFixture();

  test("--yes allows ask mode's question but not running a blocked command outside the sandbox", async () => {
    // Outside /tmp: the sandbox's private /tmp would hide a /tmp directory instead of refusing the write.
    const outside = await mkdtemp(path.join("/var/tmp", "crow-yes-"));
    const target = path.join(outside, "out.txt");
    try {
      fx.mock.script(
        reply().toolCall("terminal", { command: `echo escaped >> ${target}` }),
        textReply("could not").expect((req) => {
          const result = String(req.body.messages.at(-1)?.content);
          assert.match(result, /Read-only file system/);
          assert.doesNotMatch(result, /Ran once outside the sandbox/);
        }),
      );
      const run = await runCrow(["append a line", "--mode", "ask", "--yes"], {
        env: runEnv(fx.mock.url, fx.home.dir),
        cwd: fx.ws.dir,
      });
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stderr, /Allowed by --yes|allowed/i);
      assert.match(run.stderr, /--yes does not run a command outside the sandbox/);
      assert.equal(existsSync(target), false);
      fx.mock.assertDone();
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });
});
