import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { cleanText, collapseLine, LineCleaner, stripAnsi } from "../src/terminal/clean.js";
import { footer } from "../src/terminal/format.js";
import { OutputBuffer } from "../src/terminal/output.js";
import { type MarkerEvent, MarkerScanner } from "../src/terminal/sentinel.js";
import { stripEcho } from "../src/terminal/session.js";

const NONCE = "0123456789abcdef0123456789abcdef";
const begin = `\x1fCROW:B:${NONCE}\x1f`;
const end = (code: number, cwd: string) => `\x1fCROW:E:${NONCE}:${code}:${cwd}\x1f`;

function scanAll(chunks: string[]): MarkerEvent[] {
  const scanner = new MarkerScanner(NONCE);
  const events = chunks.flatMap((chunk) => scanner.feed(chunk));
  // A trailing separator is held back as a possible marker start until the stream ends.
  const rest = scanner.flush();
  if (rest) events.push({ type: "text", text: rest });
  // Merge adjacent text so the assertions do not depend on chunking.
  const merged: MarkerEvent[] = [];
  for (const e of events) {
    const last = merged[merged.length - 1];
    if (e.type === "text" && last?.type === "text") last.text += e.text;
    else merged.push({ ...e });
  }
  return merged;
}

describe("MarkerScanner", () => {
  test("splits text, begin and end markers, with exit code and cwd", () => {
    assert.deepEqual(scanAll([`echo\r\n${begin}hello\r\n${end(0, "/tmp/a b")}`]), [
      { type: "text", text: "echo\r\n" },
      { type: "begin" },
      { type: "text", text: "hello\r\n" },
      { type: "end", exitCode: 0, cwd: "/tmp/a b" },
    ]);
  });

  test("finds a marker cut at every possible chunk boundary", () => {
    const stream = `out1${end(42, "/srv/x:y")}out2`;
    for (let i = 1; i < stream.length; i++) {
      assert.deepEqual(
        scanAll([stream.slice(0, i), stream.slice(i)]),
        [
          { type: "text", text: "out1" },
          { type: "end", exitCode: 42, cwd: "/srv/x:y" },
          { type: "text", text: "out2" },
        ],
        `cut at ${i}`,
      );
    }
  });

  test("a marker with the wrong nonce, or a malformed one, is plain text", () => {
    const forged = `\x1fCROW:E:${"f".repeat(32)}:0:/\x1f`;
    const malformed = `\x1fCROW:E:${NONCE}:zero:/\x1f`;
    const events = scanAll([`a${forged}b${malformed}c`]);
    assert.deepEqual(events, [{ type: "text", text: `a${forged}b${malformed}c` }]);
  });

  test("a forged marker right before a real one does not hide the real one", () => {
    const events = scanAll([`\x1fnot a marker${end(1, "/")}`]);
    assert.deepEqual(events, [
      { type: "text", text: "\x1fnot a marker" },
      { type: "end", exitCode: 1, cwd: "/" },
    ]);
  });

  test("a lone separator followed by lots of text is released as text", () => {
    const scanner = new MarkerScanner(NONCE);
    const out = scanner.feed(`\x1f${"x".repeat(10_000)}`);
    assert.equal(out.length, 1);
    assert.equal(out[0]?.type, "text");
  });
});

describe("output cleaning", () => {
  test("strips colours, cursor movement, OSC titles and hyperlinks, bracketed-paste toggles", () => {
    assert.equal(stripAnsi("\x1b[1;31mred\x1b[0m \x1b[2K\x1b[1Gok"), "red ok");
    assert.equal(stripAnsi("\x1b]0;title\x07text \x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\"), "text link");
    assert.equal(stripAnsi("\x1b[?2004hprompt\x1b[?2004l"), "prompt");
    assert.equal(stripAnsi("a\x00b\x07c\tz"), "abc\tz");
  });

  test("collapses carriage-return progress to the final state and applies backspaces", () => {
    assert.equal(collapseLine("10%\r50%\r100%"), "100%");
    assert.equal(collapseLine("abcdef\rXY"), "XYcdef");
    assert.equal(collapseLine("ab\bc"), "ac");
    assert.equal(collapseLine("done\r"), "done");
  });

  test("cleanText normalises CRLF and leaves plain text alone", () => {
    assert.equal(cleanText("a\r\nb\r\n"), "a\nb\n");
    assert.equal(cleanText("plain text\n"), "plain text\n");
    assert.equal(cleanText("get 1%\rget 99%\rget 100%\r\nnext\n"), "get 100%\nnext\n");
  });

  test("LineCleaner holds an unfinished line until it completes or is flushed", () => {
    const out: string[] = [];
    const cleaner = new LineCleaner((t) => out.push(t));
    cleaner.push("50%");
    cleaner.push("\r100%\r");
    assert.deepEqual(out, []);
    cleaner.push("\nname? ");
    assert.deepEqual(out, ["100%\n"]);
    assert.equal(cleaner.hasPending, true);
    cleaner.flush();
    assert.deepEqual(out, ["100%\n", "name? "]);
  });

  test("stripEcho removes the echoed input lines only at the start", () => {
    assert.equal(stripEcho("print(1)\n1\n>>> ", "print(1)"), "1\n>>> ");
    assert.equal(stripEcho("a\nb\nout\n", "a\nb\n"), "out\n");
    assert.equal(stripEcho("other\nprint(1)\n", "print(1)"), "other\nprint(1)\n");
  });
});

describe("OutputBuffer", () => {
  test("keeps small output whole", () => {
    const buf = new OutputBuffer(100);
    buf.push("hello\n");
    buf.push("world\n");
    assert.deepEqual(buf.take(), { text: "hello\nworld\n", omittedChars: 0, omittedLines: 0 });
    assert.equal(buf.empty, true);
  });

  test("caps head and tail and says how much of the middle was cut", () => {
    const buf = new OutputBuffer(1000);
    const lines = Array.from({ length: 10_000 }, (_, i) => `line ${i + 1}\n`);
    for (const line of lines) buf.push(line);
    const total = lines.join("").length;
    const taken = buf.take();
    assert.ok(taken.text.startsWith("line 1\nline 2\n"));
    assert.ok(taken.text.endsWith("line 9999\nline 10000\n"));
    assert.equal(taken.omittedChars, total - 1000);
    assert.ok(taken.omittedLines > 9800 && taken.omittedLines < 10_000);
    assert.match(taken.text, /characters \(\d[\d,]* lines\) of output omitted/);
    assert.ok(taken.text.length < 1400);
  });

  test("each take returns only what arrived since the previous one", () => {
    const buf = new OutputBuffer(100);
    buf.push("first\n");
    assert.equal(buf.take().text, "first\n");
    buf.push("second\n");
    assert.equal(buf.take().text, "second\n");
  });
});

describe("footer", () => {
  test("uses upstream's wording, and says nothing of a success where the shell started", () => {
    assert.equal(footer("completed", "/w", 0), "[Current working directory: /w]");
    assert.equal(footer("completed", "/w", 2), "[Current working directory: /w]\n[Command failed with exit code 2]");
    assert.equal(footer("running", "/w"), "[Current working directory: /w]\n[Process still running (soft timeout)]");
    assert.equal(footer("completed", "/w", 0, "/w"), "");
    assert.equal(footer("completed", "/w", 2, "/w"), "[Command failed with exit code 2]");
    assert.equal(footer("completed", "/w/sub", 0, "/w"), "[Current working directory: /w/sub]");
  });
});
