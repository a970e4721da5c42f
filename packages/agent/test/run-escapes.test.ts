/**
 * `crow run` draws none of the model's control sequences: OSC 52 (clipboard), OSC 0 (window title), OSC 8
 * (hyperlink), CSI 2J (clear screen) and an 8-bit CSI in the answer, the thoughts and a tool call's title and
 * arguments are removed — also when a sequence is cut between two stream deltas — on a terminal and piped, while the
 * visible text (emoji and CJK included) stays. `--json` keeps the text as the model sent it (JSON escapes it).
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { type MockLlm, reply, textReply } from "@crow/testkit";
import { PtyRun, runCrow, useRunFixture } from "./run-helpers.js";

// Each string is one stream delta: most sequences are cut between two of them.
const ANSWER_DELTAS = [
  "Visible one ",
  "\x1b]52;c;UFdO",
  "RUQtQ0xJUA==\x07two ",
  "\x1b]0;PWNED-TI",
  "TLE\x1b",
  "\\three \x1b]8;;http://127.0.0.1:9/PWNED-LINK\x07link\x1b]8;;\x07 four\x1b[",
  "2J five\x9b",
  "31m six 😀 中文.",
];
const ANSWER = "Visible one two three link four five six 😀 中文.";
const THOUGHT_DELTAS = ["Thinking \x1b]0;PWNED-THOUGHT", "\x07hard\x9b2J ", "\x1b[2Jdone"];
const THOUGHT = "Thinking hard done";
const TOOL_FILE = "missing-\x1b]0;PWNED-TOOL\x07\x1b[2Jfile.txt";

/** What the model's sequences would leave behind if any got through. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the test looks for escape sequences
const LEAKED = /\x1b\]|\x1b\[2J|\x9b|\x1bP|PWNED|UFdO/;

function script(mock: MockLlm, dir: string): void {
  const first = reply();
  for (const part of THOUGHT_DELTAS) first.reasoning(part);
  for (const part of ANSWER_DELTAS) first.text(part);
  first.toolCall("read", { file_path: `${dir}/${TOOL_FILE}` });
  mock.script(first, textReply("Done \x1b]0;PWNED-END\x07now."));
}

describe("crow run strips the model's control sequences", { timeout: 120_000 }, () => {
  const fx = useRunFixture();

  test("piped: answer, thoughts and tool lines arrive without them, the visible text intact", async () => {
    script(fx.mock, fx.ws.dir);
    const run = await runCrow(["-c", fx.ws.dir, "go"], { env: fx.env });
    assert.equal(run.code, 0, run.stderr);
    assert.doesNotMatch(run.stdout, LEAKED, JSON.stringify(run.stdout));
    assert.doesNotMatch(run.stderr, LEAKED, JSON.stringify(run.stderr));
    assert.equal(run.stdout, `${ANSWER}\nDone now.\n`);
    assert.ok(run.stderr.includes(`[thinking] ${THOUGHT}`), run.stderr);
    assert.match(run.stderr, /\[failed\] read: \S*missing-file\.txt/);
    fx.mock.assertDone();
  });

  test("on a terminal: nothing of them reaches the screen", async () => {
    script(fx.mock, fx.ws.dir);
    const run = new PtyRun(["go"], fx.env, fx.ws.dir);
    try {
      assert.equal(await run.exited, 0, run.output);
      assert.doesNotMatch(run.output, LEAKED, JSON.stringify(run.output));
      assert.ok(run.text.includes(ANSWER), run.text);
      assert.ok(run.text.includes(THOUGHT), run.text);
      assert.ok(run.text.includes("Done now."), run.text);
      assert.match(run.text, /read: \S*missing-file\.txt/);
    } finally {
      run.kill();
    }
    fx.mock.assertDone();
  });

  test("a permission question shows the call's title and arguments without them", async () => {
    fx.mock.script(
      reply().toolCall("write", {
        file_path: `${fx.ws.dir}/notes-\x1b]0;PWNED-Q\x07.md`,
        content: "a\x1b[2J\x1b]52;c;UFdO\x07b\n",
      }),
      textReply("Not written."),
    );
    const run = new PtyRun(["--mode", "ask", "write it"], fx.env, fx.ws.dir);
    try {
      const question = await run.waitFor(/Allow write: \S*notes-\.md\?[\s\S]*› $/);
      assert.ok(question.includes("+ab"), question);
      run.write("n");
      // Said no to its only tool call: nothing done (exit 1, the exit-code table).
      assert.equal(await run.exited, 1, run.output);
      assert.doesNotMatch(run.output, LEAKED, JSON.stringify(run.output));
    } finally {
      run.kill();
    }
    fx.mock.assertDone();
  });

  test("--json keeps the text as the model sent it, escaped by JSON", async () => {
    script(fx.mock, fx.ws.dir);
    const run = await runCrow(["-c", fx.ws.dir, "--json", "go"], { env: fx.env });
    assert.equal(run.code, 0, run.stderr);
    const events = run.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    const text = events
      .filter((e) => e.type === "update" && e.update.sessionUpdate === "agent_message_chunk")
      .map((e) => e.update.content.text)
      .join("");
    assert.ok(text.startsWith(ANSWER_DELTAS.join("")), JSON.stringify(text));
    assert.ok(!run.stdout.includes("\x1b"), "the raw ESC never appears unescaped");
    fx.mock.assertDone();
  });
});
