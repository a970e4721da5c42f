import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { tempWorkspace } from "@crow/testkit";
import { unifiedDiff } from "../src/base/unified-diff.js";
import { style } from "../src/run/ansi.js";
import { MarkdownStyler } from "../src/run/markdown.js";
import { promptBlocks } from "../src/run/mentions.js";
import { StrippedOutput } from "../src/run/stripped-output.js";
import { TerminalOutput } from "../src/run/terminal-output.js";

const text = (lines: ReturnType<typeof unifiedDiff>) => lines.map((l) => l.text).join("\n");

describe("crow run: unified diffs", () => {
  test("a change in the middle keeps three lines of context and numbers both sides", () => {
    const before = "1\n2\n3\n4\n5\n6\n7\n8\n9\n";
    const after = "1\n2\n3\n4\nfive\n6\n7\n8\n9\n";
    assert.equal(
      text(unifiedDiff("f.txt", before, after)),
      "--- a/f.txt\n+++ b/f.txt\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8",
    );
  });

  test("a new file is all additions from /dev/null", () => {
    assert.equal(text(unifiedDiff("n.txt", null, "a\nb\n")), "--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1,2 @@\n+a\n+b");
    // An absolute path (the viewer's) without git's prefixes: not `a//tmp/f`.
    assert.deepEqual(
      unifiedDiff("/tmp/f", "x\n", "y\n")
        .slice(0, 2)
        .map((l) => l.text),
      ["--- /tmp/f", "+++ /tmp/f"],
    );
  });

  test("distant changes get separate hunks; insertions and deletions are minimal", () => {
    const before = Array.from({ length: 20 }, (_, i) => `l${i + 1}`).join("\n");
    const lines = before.split("\n");
    lines.splice(1, 1);
    lines.splice(15, 0, "new");
    const diff = text(unifiedDiff("f", before, lines.join("\n")));
    assert.deepEqual(
      diff.split("\n").filter((l) => l.startsWith("@@") || l.startsWith("+") || l.startsWith("-")),
      ["--- a/f", "+++ b/f", "@@ -1,5 +1,4 @@", "-l2", "@@ -14,6 +13,7 @@", "+new"],
    );
  });

  test("unchanged text is a note; long diffs are cut with a count", () => {
    assert.deepEqual(unifiedDiff("same", "x\n", "x\n"), [{ kind: "note", text: "same: no changes" }]);
    const big = unifiedDiff("big", null, `${Array.from({ length: 100 }, (_, i) => i).join("\n")}\n`, { maxLines: 10 });
    assert.equal(big.filter((l) => l.kind === "add").length, 10);
    assert.deepEqual(big.at(-1), { kind: "note", text: "… 90 more diff lines" });
  });
});

describe("crow run: Markdown-ish styling of streamed text", () => {
  const on = style(true);

  test("markers split across chunks are styled once whole; the text is unchanged", () => {
    const md = new MarkdownStyler(on);
    const out = ["Use *", "*bold** and `co", "de` here\n"].map((c) => md.push(c)).join("") + md.flush();
    // Inline code streams as it comes (cyan per chunk); a held-back `*` waits to know whether it is bold.
    assert.equal(out, "Use \x1b[1m**bold**\x1b[22m and \x1b[36m`co\x1b[39m\x1b[36mde`\x1b[39m here\n");
  });

  test("headings bold, fenced code cyan", () => {
    const md = new MarkdownStyler(on);
    const out = md.push("# Title\n```\nx = 1\n```\nafter") + md.flush();
    assert.equal(out, "\x1b[1m# Title\x1b[22m\n\x1b[36m```\x1b[39m\n\x1b[36mx = 1\x1b[39m\n\x1b[36m```\x1b[39m\nafter");
  });

  test("without color the text passes through untouched", () => {
    const md = new MarkdownStyler(style(false));
    assert.equal(md.push("**a** `b` *") + md.flush(), "**a** `b` *");
  });
});

describe("crow run: @mentions", () => {
  test("existing paths become resource links (with ranges); missing ones are reported; duplicates ignored", async () => {
    const ws = await tempWorkspace();
    try {
      await ws.write("src/a.ts", "x\n");
      const { blocks, missing } = promptBlocks(
        "look at @src/a.ts#L1:2, @src/a.ts#L1:2 and @nope.ts or mail me@host",
        ws.dir,
      );
      assert.deepEqual(missing, ["nope.ts"]);
      assert.equal(blocks.length, 2);
      assert.deepEqual(blocks[1], {
        type: "resource_link",
        uri: `file://${ws.path("src/a.ts")}#L1:2`,
        name: "a.ts",
      });
    } finally {
      await ws.cleanup();
    }
  });
});

describe("crow run: the answer word-wrapped to the terminal", () => {
  /** A terminal (or a pipe) of `columns` fed `chunks` of streamed answer; returns what a person reads. */
  function render(columns: number, chunks: string[], tty = true): string {
    let out = "";
    const sink = {
      write: (t: string) => {
        out += t;
      },
    };
    const output = new TerminalOutput({
      stdout: sink,
      stderr: sink,
      tty,
      color: tty,
      columns: () => columns,
      cwd: "/",
    });
    output.turnStart();
    for (const chunk of chunks) {
      output.update({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: chunk } }, false);
    }
    output.turnEnd("end_turn");
    return screen(out);
  }

  /** What the terminal shows: "move left n, erase to the end of the line" applied, other escape sequences dropped. */
  function screen(raw: string): string {
    let shown = "";
    // biome-ignore lint/suspicious/noControlCharactersInRegex: interpreting escape sequences
    for (const part of raw.split(/(\x1b\[[0-9;?]*[ -/]*[@-~])/)) {
      // biome-ignore lint/suspicious/noControlCharactersInRegex: interpreting escape sequences
      const back = /^\x1b\[(\d+)D$/.exec(part);
      if (back) shown = shown.slice(0, -Number(back[1]));
      else if (!part.startsWith("\x1b")) shown += part.replace(/\r/g, "");
    }
    return shown;
  }

  test("lines break at spaces within the width, words split across chunks stay whole, styling takes no width", () => {
    const shown = render(21, [
      "The quick **brown** fo",
      "x jumps over the la",
      "zy dog and keeps running.\nNext line.",
    ]);
    const lines = shown.split("\n").filter((l) => l !== "");
    assert.deepEqual(lines, [
      "The quick **brown**",
      "fox jumps over the",
      "lazy dog and keeps",
      "running.",
      "Next line.",
    ]);
    for (const line of lines) assert.ok(line.length <= 20, line);
  });

  test("a word longer than the line starts a line of its own; piped output is never wrapped", () => {
    const long = "x".repeat(30);
    // The terminal (not this test's screen) cuts the long word at its width; the next word starts a line.
    assert.equal(render(21, [`see ${long} here`]), `see\n${long}\nhere\n`);
    assert.equal(render(10, ["one two three four five"], false), "one two three four five\n");
  });
});

describe("crow run: the model's control sequences never reach the renderer", () => {
  test("plan entries, tool titles, notices, errors and replayed prompts are drawn without them", () => {
    let out = "";
    const sink = {
      write: (text: string) => {
        out += text;
      },
    };
    const output = new StrippedOutput(
      new TerminalOutput({ stdout: sink, stderr: sink, tty: true, color: true, columns: () => 100, cwd: "/" }),
    );
    output.session({ sessionId: "s1", loaded: true, model: "m\x1b]0;PWNED\x07" });
    output.update({ sessionUpdate: "user_message_chunk", content: { type: "text", text: "ask\x1b[2J" } }, true);
    output.turnStart("go");
    output.update(
      {
        sessionUpdate: "plan",
        entries: [{ content: "step\x1b]52;c;UFdO\x07 one", priority: "medium", status: "pending" }],
      },
      false,
    );
    output.update({ sessionUpdate: "tool_call", toolCallId: "t1", title: "run\x9b2J it", status: "pending" }, false);
    output.notice("note\x1b]8;;http://x\x07");
    output.error("bad\x1bc");
    output.turnEnd("end_turn");
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the test looks for escape sequences
    assert.doesNotMatch(out, /\x1b\]|\x1b\[2J|\x9b|\x1bc|PWNED|UFdO/, JSON.stringify(out));
    for (const visible of ["ask", "step one", "run it", "note", "bad"]) {
      assert.ok(out.includes(visible), `${visible} in ${JSON.stringify(out)}`);
    }
  });
});
