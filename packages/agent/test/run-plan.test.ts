import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type MockLlm, reply, startMockLlm, type TempWorkspace, tempWorkspace, textReply } from "@crow/testkit";
import { PtyRun, runCrow, runEnv, tempHome } from "./run-helpers.js";

const entry = (content: string, status: string, priority = "medium") => ({ content, status, priority });
const FIRST = [
  entry("Read the parser", "in_progress", "high"),
  entry("Fix it", "pending"),
  entry("Test it", "pending"),
];
const SECOND = [
  entry("Read the parser", "completed", "high"),
  entry("Fix it", "in_progress"),
  entry("Test it", "pending"),
];

describe("crow run: the plan", { timeout: 120_000 }, () => {
  let mock: MockLlm;
  let ws: TempWorkspace;
  let home: { dir: string; cleanup: () => Promise<void> };
  let env: Record<string, string>;
  const runs: PtyRun[] = [];

  before(async () => {
    mock = await startMockLlm();
    ws = await tempWorkspace();
    home = await tempHome();
    env = runEnv(mock.url, home.dir);
  });
  after(async () => {
    for (const run of runs) run.kill();
    await mock.close();
    await ws.cleanup();
    await home.cleanup();
  });

  test("on a terminal the checklist is redrawn in place as the model updates it", async () => {
    mock.script(
      reply().toolCall("todo", { todos: FIRST }),
      reply().toolCall("todo", { todos: SECOND }),
      textReply("Fixing it now."),
    );
    const run = new PtyRun(["fix the parser"], env, ws.dir);
    runs.push(run);
    assert.equal(await run.exited, 0, run.text);
    const first = run.text.indexOf("Plan (0/3)");
    const second = run.text.indexOf("Plan (1/3)");
    assert.ok(first >= 0 && second > first, run.text);
    assert.match(
      run.text.slice(first, second),
      /^Plan \(0\/3\)\n {2}◐ Read the parser\n {2}○ Fix it\n {2}○ Test it\n$/,
    );
    assert.match(run.text.slice(second), /^Plan \(1\/3\)\n {2}✓ Read the parser\n {2}◐ Fix it\n {2}○ Test it\n/);
    // The second version goes over the first: the cursor moves up its four lines and clears below.
    const raw = run.output;
    const redraw = raw.lastIndexOf("\x1b[4A\r\x1b[J", raw.indexOf("Plan (1/3)"));
    assert.ok(redraw > raw.indexOf("Plan (0/3)"), "the plan is redrawn in place");
    // The todo calls themselves get no tool lines: the checklist is what they show.
    assert.doesNotMatch(run.text, /[○◐✓] todo/);
    mock.assertDone();
  });

  test("--json: each version of the plan is a plan event with the whole list", async () => {
    mock.script(
      reply().toolCall("todo", { todos: FIRST }),
      reply().toolCall("todo", { todos: SECOND }),
      textReply("Fixing it now."),
    );
    const run = await runCrow(["-c", ws.dir, "--json", "fix the parser"], { env });
    assert.equal(run.code, 0, run.stderr);
    const events = run.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { type: string; [key: string]: unknown });
    const sessionId = events[0]?.sessionId;
    assert.deepEqual(
      events.filter((e) => e.type === "plan"),
      [
        { type: "plan", sessionId, entries: FIRST },
        { type: "plan", sessionId, entries: SECOND },
      ],
    );
    mock.assertDone();
  });

  test("piped: the plan goes to stderr as a plain checklist, the answer alone to stdout", async () => {
    mock.script(reply().toolCall("todo", { todos: SECOND }), textReply("Fixing it now."));
    const run = await runCrow(["-c", ws.dir, "fix the parser"], { env });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, "Fixing it now.\n");
    assert.match(run.stderr, /Plan \(1\/3\)\n {2}\[x\] Read the parser\n {2}\[~\] Fix it\n {2}\[ \] Test it\n/);
    mock.assertDone();
  });
});
