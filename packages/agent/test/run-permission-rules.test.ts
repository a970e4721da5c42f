import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { type MockLlm, reply, startMockLlm, type TempWorkspace, tempWorkspace, textReply } from "@crow/testkit";
import { PtyRun, runCrow, runEnv, tempHome } from "./run-helpers.js";

describe("crow run with permission rules", { timeout: 120_000 }, () => {
  let mock: MockLlm;
  let ws: TempWorkspace;
  let home: { dir: string; cleanup: () => Promise<void> };
  let env: Record<string, string>;
  const runs: PtyRun[] = [];

  before(async () => {
    mock = await startMockLlm();
    ws = await tempWorkspace();
    home = await tempHome();
    await writeFile(
      path.join(home.dir, "config.yaml"),
      "permissions:\n  ask: ['write(*.md)']\n  deny: ['terminal(rm *)']\n",
    );
    env = runEnv(mock.url, home.dir);
  });
  after(async () => {
    for (const run of runs) run.kill();
    await mock.close();
    await ws.cleanup();
    await home.cleanup();
  });

  test("an ask rule asks in code mode, and the question names the rule", async () => {
    mock.script(
      reply().toolCall("write", { file_path: ws.path("NOTES.md"), content: "# notes\n" }),
      textReply("Written."),
    );
    const run = new PtyRun(["write the notes"], env, ws.dir);
    runs.push(run);
    const asked = await run.waitFor(/Reject › $/);
    assert.match(
      asked,
      /\? Allow write: .*NOTES\.md\?\n {2}Asked because of the permission rule "write\(\*\.md\)"\.\n/,
    );
    run.write("y");
    assert.equal(await run.exited, 0);
    assert.equal(await ws.read("NOTES.md"), "# notes\n");
    mock.assertDone();
  });

  test("a deny rule refuses without a question, and the model is told the rule", async () => {
    await ws.write("keep.txt", "x");
    mock.script(
      reply().toolCall("terminal", { command: "rm keep.txt" }),
      textReply("I may not delete it.").expect((req) =>
        assert.match(String(req.body.messages.at(-1)?.content), /permission rule "terminal\(rm \*\)"/),
      ),
    );
    const run = await runCrow(["delete keep.txt"], { env, cwd: ws.dir });
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /I may not delete it\./);
    assert.equal(await ws.read("keep.txt"), "x");
    mock.assertDone();
  });
});

describe("crow run: a read deny rule holds against a hard link the shell makes", { timeout: 120_000 }, () => {
  let mock: MockLlm;
  let ws: TempWorkspace;
  let home: { dir: string; cleanup: () => Promise<void> };

  before(async () => {
    mock = await startMockLlm();
    ws = await tempWorkspace();
    home = await tempHome();
    await writeFile(path.join(home.dir, "config.yaml"), "permissions:\n  deny: ['read(keys/**)']\n");
  });
  after(async () => {
    await mock.close();
    await ws.cleanup();
    await home.cleanup();
  });

  test("`ln keys/api.txt notes.txt` in the shell, then read notes.txt: refused by the rule", async () => {
    await ws.write("keys/api.txt", "sk-hardlink-secret\n");
    mock.script(
      reply().toolCall("terminal", { command: "ln keys/api.txt notes.txt && stat -c %h notes.txt" }),
      reply()
        .toolCall("read", { file_path: ws.path("notes.txt") })
        .expect((req) => assert.match(String(req.body.messages.at(-1)?.content), /^2\b/m, "the link was made")),
      textReply("Refused.").expect((req) => {
        const result = String(req.body.messages.at(-1)?.content);
        assert.doesNotMatch(result, /sk-hardlink-secret/);
        assert.match(result, /permission rule "read\(keys\/\*\*\)"/);
      }),
    );
    const run = await runCrow(["read the notes"], { env: runEnv(mock.url, home.dir), cwd: ws.dir });
    assert.equal(run.code, 0, run.stderr);
    mock.assertDone();
  });
});
