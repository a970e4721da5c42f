import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { after, before, describe, test } from "node:test";
import { type MockLlm, reply, startMockLlm, type TempWorkspace, tempWorkspace, textReply } from "@crow/testkit";
import { ANSI, PtyRun, runEnv, tempHome, withoutSpinner } from "./run-helpers.js";

const PROMPT = /crow› $/;

describe("crow run in a pseudo-terminal", { timeout: 120_000 }, () => {
  let mock: MockLlm;
  let ws: TempWorkspace;
  let home: { dir: string; cleanup: () => Promise<void> };
  let env: Record<string, string>;
  const runs: PtyRun[] = [];
  const start = (args: string[]) => {
    const run = new PtyRun(args, env, ws.dir);
    runs.push(run);
    return run;
  };

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

  test("REPL: typed prompts, Ctrl-C cancels a streaming turn, the session goes on, Ctrl-D quits", async () => {
    mock.script(
      textReply("Hi, I am Crow.").expect((req) => assert.equal(req.body.messages.at(-1)?.content, "hello")),
      reply().text("Let me write a very long essay").hang(),
      textReply("Still here.").expect((req) => {
        const messages = req.body.messages;
        assert.equal(messages.at(-1)?.content, "are you there?");
        // The cancelled turn's partial text stays in the history.
        assert.equal(messages.at(-2)?.content, "Let me write a very long essay");
      }),
    );
    const run = start(["-i"]);
    await run.waitFor(PROMPT);
    let mark = run.mark();
    run.write("hello\r");
    await run.waitFor(/Hi, I am Crow\.\n[\s\S]*crow› $/, mark);

    mark = run.mark();
    run.write("write an essay\r");
    await run.waitFor(/Let me write a very long essay/, mark);
    run.write("\x03");
    const cancelled = await run.waitFor(/Cancelled\.\n[\s\S]*crow› $/, mark);
    assert.match(cancelled, /Cancelling… \(press Ctrl-C again to quit\)/);

    mark = run.mark();
    run.write("are you there?\r");
    await run.waitFor(/Still here\.\n[\s\S]*crow› $/, mark);
    run.write("\x04");
    assert.equal(await run.exited, 0);
    assert.match(run.text, /Session (\S+)\. Continue with: crow run -s \1(?: -c \S+)? "<prompt>"/);
    mock.assertDone();
  });

  test("-i -s shows the continued session's history, then takes prompts", async () => {
    mock.script(textReply("The answer is 42."), textReply("Still 42."));
    const first = start(["what is the answer?"]);
    assert.equal(await first.exited, 0);
    const id = /Continue with: crow run -s (\S+)/.exec(first.text)?.[1];
    assert.ok(id, first.text);

    const run = start(["-i", "-s", id]);
    const replay = await run.waitFor(PROMPT);
    assert.match(replay, /› what is the answer\?\nThe answer is 42\.\n/);
    const mark = run.mark();
    run.write("sure?\r");
    await run.waitFor(/Still 42\.\n[\s\S]*crow› $/, mark);
    run.write("/exit\r");
    assert.equal(await run.exited, 0);
    mock.assertDone();
  });

  test("REPL: a banner, Ctrl-C at an empty prompt asks for a second press, /help adds how to quit", async () => {
    mock.script(textReply("Read nothing."));
    const run = start(["-i"]);
    const banner = await run.waitFor(PROMPT);
    assert.match(banner, new RegExp(`Crow · mock-model · ${ws.dir} · /help for commands, /exit or Ctrl-D to quit`));
    let mark = run.mark();
    run.write("\x03");
    await run.waitFor(/Press Ctrl-C again to quit \(or type \/exit, or Ctrl-D\)\.\n[\s\S]*crow› $/, mark);
    mark = run.mark();
    run.write("/help\r");
    const help = await run.waitFor(/Ctrl-D quits[\s\S]*crow› $/, mark);
    assert.match(help, /\/compact/);
    assert.match(
      help,
      /In crow run: \/exit or Ctrl-D quits; Ctrl-C cancels a running turn, twice at an empty prompt quits\./,
    );
    mark = run.mark();
    run.write("summarize @missing/notes.md please\r");
    const turn = await run.waitFor(/Read nothing\.\n[\s\S]*crow› $/, mark);
    assert.match(turn, /@missing\/notes\.md: no such file in .*; sent as plain text/);
    // Ctrl-C, then a line, then Ctrl-C again: the count starts over; two in a row quit.
    run.write("\x03");
    // After the prompt is back, as a person would press it (before that the terminal is not in raw mode yet).
    await run.waitFor(/Press Ctrl-C again[\s\S]*crow› $/, mark);
    run.write("\x03");
    // Quitting an idle REPL cancels nothing: 0, as with Ctrl-D.
    assert.equal(await run.exited, 0);
    mock.assertDone();
  });

  test("--mode ask: the question shows the change; y allows it, n rejects it", async () => {
    const file = ws.path("greeting.txt");
    mock.script(
      reply().text("Creating it.").toolCall("write", { file_path: file, content: "hello\n" }),
      textReply("Written."),
      reply().toolCall("edit", { file_path: file, old_string: "hello", new_string: "goodbye" }),
      textReply("Left it alone.").expect((req) => {
        const result = req.body.messages.findLast((m) => m.role === "tool");
        assert.match(String(result?.content), /reject|denied|not allowed/i);
      }),
    );
    const allow = start(["--mode", "ask", "write greeting.txt"]);
    const asked = await allow.waitFor(/\[y\] Allow once {2}\[a\] Always allow {2}\[n\] Reject › $/);
    // The text and the announced (pending) call come before the question about it.
    assert.match(asked, /Creating it\.\n○ write: .*greeting\.txt\n\? Allow write: .*greeting\.txt\?\n {2}\+hello\n/);
    allow.write("y");
    assert.equal(await allow.exited, 0);
    assert.match(allow.text, /Reject › Allow once\n/);
    assert.match(allow.text, /✓ write: .*greeting\.txt\n/);
    assert.match(allow.text, /Written\.\n/);
    assert.equal(await ws.read("greeting.txt"), "hello\n");

    const reject = start(["--mode", "ask", "change the greeting"]);
    const question = await reject.waitFor(/Reject › $/);
    assert.match(question, /\? Allow edit: .*greeting\.txt\?\n {2}-hello\n {2}\+goodbye\n/);
    reject.write("n");
    // The exit-code table's "nothing done because you said no": 1, and said.
    assert.equal(await reject.exited, 1);
    assert.match(reject.text, /crow: nothing done: you said no to the tool call it asked for\n/);
    assert.match(reject.text, /Reject › Reject\n/);
    assert.match(reject.text, /✗ edit: .*greeting\.txt\n/);
    assert.equal(await ws.read("greeting.txt"), "hello\n");
    mock.assertDone();
  });

  test("--mode ask, a command: the question shows it once, as a command line (no Markdown fences)", async () => {
    mock.script(
      reply().toolCall("terminal", { command: "echo asked-once" }),
      textReply("Not run.").expect((req) => {
        const result = req.body.messages.findLast((m) => m.role === "tool");
        assert.match(String(result?.content), /rejected/i);
      }),
    );
    const run = start(["--mode", "ask", "say it"]);
    const question = withoutSpinner(await run.waitFor(/Reject › $/));
    const asked = question.slice(question.lastIndexOf("? Allow"));
    assert.match(asked, /^\? Allow terminal\?\n {2}\$ echo asked-once\n {2}\[y\] Allow once/);
    assert.equal(asked.match(/asked-once/g)?.length, 1, asked);
    assert.doesNotMatch(question, /```/);
    run.write("n");
    assert.equal(await run.exited, 1);
    mock.assertDone();
  });

  test("on a terminal: colors, a colored diff, status icons", async () => {
    const file = ws.path("colors.txt");
    mock.script(
      reply().reasoning("Plan it.").text("Making **it**.").toolCall("write", { file_path: file, content: "red\n" }),
      textReply("Done."),
    );
    const run = start(["make colors.txt"]);
    assert.equal(await run.exited, 0);
    assert.match(run.output, ANSI);
    // Thoughts dimmed and italic, bold Markdown, the added line green.
    const esc = "\x1b[";
    const output = withoutSpinner(run.output);
    assert.ok(output.includes(`${esc}2m${esc}3mPlan it.${esc}23m${esc}22m`), "dim italic thought");
    assert.ok(output.includes(`${esc}1m**it**${esc}22m`), "bold Markdown");
    assert.ok(output.includes(`${esc}32m+red${esc}39m`), "green added line");
    assert.match(run.text, /✓ write: .*colors\.txt\n {2}--- \/dev\/null\n {2}\+\+\+ b\/colors\.txt\n/);
    assert.equal(existsSync(file), true);
    mock.assertDone();
  });
});
