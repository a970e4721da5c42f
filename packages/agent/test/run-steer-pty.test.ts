/**
 * `crow run -i` in a pseudo-terminal: a line typed while the agent works steers the running turn on Enter (the model
 * gets it after the running tool call, before its next request, and it shows where it joined), and waits for the
 * next turn on Tab (it runs as a prompt of its own once the turn ended).
 */
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { type MockLlm, reply, startMockLlm, type TempWorkspace, tempWorkspace, textReply } from "@crow/testkit";
import { PtyRun, runEnv, tempHome } from "./run-helpers.js";

const PROMPT = /crow› $/;

describe("crow run: typing while the agent works", { timeout: 120_000 }, () => {
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

  test("Enter steers the running turn, Tab queues the line as the next prompt", async () => {
    const go = path.join(ws.dir, "go");
    mock.script(
      // The tool round waits until the test has typed both lines.
      reply()
        .text("Starting.")
        .toolCall("terminal", { command: `while [ ! -f ${go} ]; do sleep 0.1; done; echo ran` }),
      textReply("Checked the tests too.").expect((req) => {
        const messages = req.body.messages;
        assert.equal(messages.at(-2)?.role, "tool", "the steer joined after the tool's result");
        assert.equal(messages.at(-1)?.role, "user");
        assert.equal(messages.at(-1)?.content, "also check the tests");
      }),
      textReply("Docs written.").expect((req) => {
        const messages = req.body.messages;
        assert.equal(messages.at(-1)?.content, "then write docs");
        assert.equal(messages.at(-2)?.content, "Checked the tests too.", "queued: after the steered turn ended");
      }),
    );
    run = new PtyRun(["-i"], runEnv(mock.url, home.dir), ws.dir);
    await run.waitFor(PROMPT);
    const mark = run.mark();
    run.write("do the job\r");
    await run.waitFor(/Starting\./, mark);
    await mock.waitForRequests(1);
    run.write("also check the tests\r");
    run.write("then write docs\t");
    await run.waitFor(/Queued for the next turn: then write docs/, mark);
    await writeFile(go, "");
    const shown = await run.waitFor(/Docs written\.\n[\s\S]*crow› $/, mark);
    // The steer shows as the user's words where the model got them, before the answer it changed.
    assert.match(shown, /› also check the tests[\s\S]*Checked the tests too\.[\s\S]*Docs written\./);
    run.write("\x04");
    assert.equal(await run.exited, 0);
    mock.assertDone();
  });
});
