/**
 * The control-sequence stripper `crow run` draws the model's text through: every kind of sequence goes, every
 * printable character stays, and cutting the input anywhere (as stream deltas do) gives the same result.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ControlStripper, stripControls } from "../src/control-text.js";

const HOSTILE =
  "a\x1b]52;c;UFdORUQ=\x07b\x1b]0;title\x1b\\c\x1b]8;;http://x/\x07link\x1b]8;;\x07d\x1b[2Je\x9b31mf\x1bPq#0\x1b\\g" +
  "\x1b_apc\x9ch\x9dosc\x07i\x1bcj\x1b(Bk\x85l\x07\x08\rm\x7fn😀 中文 e\u0301\tz\n";
const VISIBLE = "abclinkdefghijklmn😀 中文 e\u0301\tz\n";

describe("stripControls", () => {
  test("removes OSC, CSI (7- and 8-bit), DCS/APC strings, other escapes, C0 and C1 controls; keeps the text", () => {
    assert.equal(stripControls(HOSTILE), VISIBLE);
  });

  test("text without controls comes back as it is", () => {
    const text = "plain 😀 中文 e\u0301\ttab\nline";
    assert.equal(stripControls(text), text);
  });

  test("a string never terminated ends at the newline, which stays; a lone ESC at the end goes", () => {
    assert.equal(stripControls("x\x1b]0;never ends\nnext line\x1b"), "x\nnext line");
  });
});

describe("ControlStripper", () => {
  test("the input cut at any one point gives the same text", () => {
    for (let cut = 0; cut <= HOSTILE.length; cut++) {
      const stripper = new ControlStripper();
      const out = stripper.push(HOSTILE.slice(0, cut)) + stripper.push(HOSTILE.slice(cut));
      assert.equal(out, VISIBLE, `cut at ${cut}`);
    }
  });

  test("one character at a time gives the same text", () => {
    const stripper = new ControlStripper();
    assert.equal([...HOSTILE].map((c) => stripper.push(c)).join(""), VISIBLE);
  });

  test("reset forgets a sequence left open", () => {
    const stripper = new ControlStripper();
    assert.equal(stripper.push("a\x1b]0;open"), "a");
    stripper.reset();
    assert.equal(stripper.push("visible"), "visible");
  });
});
