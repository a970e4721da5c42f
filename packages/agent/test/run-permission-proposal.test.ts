/**
 * `crow run`'s permission question previews the change the tool proposed (its dry run on crow-mcp, carried by the
 * request), not one rebuilt from the arguments: a write over an existing file shows the lines it removes, an edit the
 * unchanged lines around it.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type MockLlm, reply, startMockLlm, type TempWorkspace, tempWorkspace, textReply } from "@crow/testkit";
import { PtyRun, runEnv, tempHome } from "./run-helpers.js";

describe("crow run: the permission question shows the proposed change", { timeout: 120_000 }, () => {
  let mock: MockLlm;
  let ws: TempWorkspace;
  let home: { dir: string; cleanup: () => Promise<void> };
  let run: PtyRun | undefined;

  before(async () => {
    mock = await startMockLlm();
    ws = await tempWorkspace();
    home = await tempHome();
  });
  after(async () => {
    run?.kill();
    await mock.close();
    await ws.cleanup();
    await home.cleanup();
  });

  test("a write over a file shows what it replaces; an edit shows its context", async () => {
    await ws.write("notes.txt", "old line\n");
    await ws.write("list.txt", "one\ntwo\nthree\n");
    mock.script(
      reply().toolCall("write", { file_path: ws.path("notes.txt"), content: "new line\n" }),
      reply().toolCall("edit", { file_path: ws.path("list.txt"), old_string: "two", new_string: "2" }),
      textReply("Left both alone."),
    );
    run = new PtyRun(["--mode", "ask", "tidy up"], runEnv(mock.url, home.dir), ws.dir);
    const first = await run.waitFor(/Reject › $/);
    assert.match(first, /\? Allow write: .*notes\.txt\?\n {2}-old line\n {2}\+new line\n/);
    const mark = run.mark();
    run.write("n");
    const second = await run.waitFor(/Reject › $/, mark);
    assert.match(second, /\? Allow edit: .*list\.txt\?\n {3}one\n {2}-two\n {2}\+2\n {3}three\n/);
    run.write("n");
    // No to both: nothing done (exit 1, the exit-code table), and said.
    assert.equal(await run.exited, 1);
    assert.match(run.text, /crow: nothing done: you said no to all 2 tool calls it asked for/);
    assert.equal(await ws.read("notes.txt"), "old line\n");
    assert.equal(await ws.read("list.txt"), "one\ntwo\nthree\n");
    mock.assertDone();
  });
});
