/**
 * `crow run --add-dir DIR`: the session's additional directories (ACP `additionalDirectories`), writable by its
 * commands like the cwd, and searched by `@` mentions that name nothing in the cwd. The extra directory lives under
 * /var/tmp: outside the workspace and outside the sandbox's private /tmp.
 */
import assert from "node:assert/strict";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { reply, textReply } from "@crow/testkit";
import { runCrow, useRunFixture } from "./run-helpers.js";

describe("crow run --add-dir", { timeout: 120_000 }, () => {
  const fx = useRunFixture();
  let extra: string;
  before(async () => {
    extra = await mkdtemp(path.join("/var/tmp", "crow-add-dir-"));
    await writeFile(path.join(extra, "plan.md"), "PLAN-IN-THE-OTHER-DIR\n");
  });
  after(async () => {
    await rm(extra, { recursive: true, force: true });
  });

  test("the directory joins the workspace: named to the model, writable, and @mentions resolve there", async () => {
    fx.mock.script(
      reply()
        .toolCall("terminal", { command: `echo done > ${extra}/done.txt` })
        .expect((req) => {
          assert.ok(String(req.body.messages[0]?.content).includes(`- ${extra}`), "the system prompt names it");
          assert.match(JSON.stringify(req.body.messages.at(-1)?.content), /PLAN-IN-THE-OTHER-DIR/);
        }),
      textReply("ok").expect((req) => assert.equal(String(req.body.messages.at(-1)?.content), "(no output)")),
    );
    const run = await runCrow(["follow @plan.md", "--add-dir", extra], { env: fx.env, cwd: fx.ws.dir });
    assert.equal(run.code, 0, run.stderr);
    assert.doesNotMatch(run.stderr, /no such file/);
    assert.equal(await readFile(path.join(extra, "done.txt"), "utf8"), "done\n");
    fx.mock.assertDone();
  });

  test("a directory that does not exist is a usage error (exit 2) naming it", async () => {
    const run = await runCrow(["hi", "--add-dir", path.join(extra, "missing")], { env: fx.env, cwd: fx.ws.dir });
    assert.equal(run.code, 2);
    assert.match(run.stderr, /--add-dir .*missing: no such directory/);
  });
});
