import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  detectEol,
  EditError,
  type EditErrorKind,
  normalizeForEdit,
  replace,
  replacementDiff,
  restoreShape,
  withoutResultDiff,
} from "../src/edit/index.js";
import { CASCADE_CASES as cascade } from "./edit-cases.js";

function fails(fn: () => unknown, kind: EditErrorKind, message: RegExp): void {
  assert.throws(fn, (error: unknown) => {
    assert.ok(error instanceof EditError, `expected an EditError, got ${String(error)}`);
    assert.equal(error.kind, kind);
    assert.match(error.message, message);
    return true;
  });
}

describe("replace: the cascade", () => {
  for (const c of cascade) {
    test(`reaches ${c.matcher}`, () => {
      const outcome = replace(c.content, c.old, c.new);
      assert.equal(outcome.matcher, c.matcher);
      assert.equal(outcome.content, c.expected);
      assert.equal(outcome.replacements.length, 1);
    });
  }

  test("an ambiguous exact match gives way to a unique whole-line match", () => {
    const outcome = replace("x = foo()\n    foo()\n", "foo()", "bar()");
    assert.equal(outcome.matcher, "line-trimmed");
    assert.equal(outcome.content, "x = foo()\n    bar()\n");
  });

  test("found N times when every matcher is ambiguous, naming the lines", () => {
    fails(
      () => replace("a();\nb();\na();\n", "a();", "c();"),
      "ambiguous",
      /^old_string found 2 times\. Provide more context to identify the correct match\.\nThe matches start on lines 1, 3\./,
    );
    fails(() => replace("foo bar foo", "foo", "x"), "ambiguous", /found 2 times[\s\S]*All of them are on line 1/);
  });

  test("two equally similar block-anchor candidates are an ambiguity, not a coin toss", () => {
    const block = "function f() {\n  const a = 1;\n  return a;\n}\n";
    fails(
      () => replace(block + block, "function f() {\n  const a = 2;\n  return a;\n}", "x"),
      "ambiguous",
      /found 2 times/,
    );
  });

  test("not found shows the closest lines with line numbers", () => {
    const content = "import os\n\ndef main():\n    print('hello world')\n    return 0\n";
    fails(
      () => replace(content, "def main():\n    print('hello, world')", "x"),
      "not-found",
      /^old_string not found in file\nDid you mean lines 3-4 \(the closest match, \d+% similar\)\?\n3\tdef main\(\):\n4\t {4}print\('hello world'\)\n/,
    );
    fails(() => replace(content, "zzzzzzzzzzzzzzzzzz", "x"), "not-found", /No similar lines were found/);
  });

  test("old_string equal to new_string is refused with upstream's message", () => {
    fails(() => replace("abc", "b", "b"), "identical", /^old_string and new_string must be different$/);
  });
});

describe("replace: upstream defects stay fixed", () => {
  test("an empty old_string does not hang: it fills empty content and is refused on non-empty content", () => {
    assert.equal(replace("", "", "new file\n").content, "new file\n");
    fails(() => replace("something", "", "x"), "empty-old", /old_string is empty/);
  });

  test("block-anchor does not replace a block whose middle has nothing in common (#14046)", () => {
    const content = "function save(user) {\n  validate(user);\n}\n";
    const hallucinated =
      "function save(user) {\n  const rows = await db.insert(users).values(user);\n  await audit.log(rows);\n}";
    fails(() => replace(content, hallucinated, "function save(user) {}"), "not-found", /not found/);
  });

  test("a 3-line find with a trailing newline is 2 lines and does not swallow a block (#14632)", () => {
    const content = "if (ready) {\n  launch();\n  cleanup();\n}\n";
    fails(() => replace(content, "if (ready) {\n}\n", "if (ready) {\n  go();\n}\n"), "not-found", /not found/);
  });

  test("blank middle lines do not block a near-identical block (#45199)", () => {
    const content = "function f() {\n  const a = 1;\n\n  const b = 2;\n\n  return a + b;\n}\n";
    const outcome = replace(
      content,
      "function f() {\n  const a = 1;\n  const b = 2;\n  return a + b + 0;\n}",
      "function f() {\n  return 3;\n}",
    );
    assert.equal(outcome.matcher, "block-anchor");
    assert.equal(outcome.content, "function f() {\n  return 3;\n}\n");
  });

  test("new_string is re-indented by the indentation delta of a fuzzy match", () => {
    const outcome = replace(
      "class A:\n    def f(self):\n        return 1\n",
      "def f(self):\n    return 1",
      "def f(self):\n    if x:\n        return 2\n    return 1",
    );
    assert.deepEqual(outcome.indentShift, { from: "", to: "    " });
    assert.equal(
      outcome.content,
      "class A:\n    def f(self):\n        if x:\n            return 2\n        return 1\n",
    );
    const tabs = replace("\t\tcall(a,  b)\n", "    call(a, b)", "    call(b, a)");
    assert.equal(tabs.content, "\t\tcall(b, a)\n", "spaces in old_string become the file's tabs");
  });

  test("a fuzzy match of a find ending in a newline does not add a blank line", () => {
    const outcome = replace("  a\n  b\nc\n", "a\nb\n", "x\ny\n");
    assert.equal(outcome.content, "  x\n  y\nc\n");
  });

  test("replace_all replaces every occurrence, exact or fuzzy", () => {
    const all = replace("foo bar foo baz foo", "foo", "qux", true);
    assert.equal(all.content, "qux bar qux baz qux");
    assert.equal(all.replacements.length, 3);
    const fuzzy = replace("  a();\n  b();\n    a();\n", "a();  ", "c();", true);
    assert.equal(fuzzy.matcher, "line-trimmed");
    assert.equal(fuzzy.content, "  c();\n  b();\n    c();\n");
  });
});

describe("line endings and byte-order mark", () => {
  test("a CRLF file is matched as LF and written back as CRLF, whatever the model sent", () => {
    const file = "one\r\ntwo\r\nthree\r\n";
    for (const [oldString, newString] of [
      ["two\n", "2\n"],
      ["two\r\n", "2\r\n"],
      ["two\r\n", "2\n"],
    ] as const) {
      const n = normalizeForEdit(file, oldString, newString);
      assert.equal(n.eol, "\r\n");
      const outcome = replace(n.content, n.oldString, n.newString);
      assert.equal(restoreShape(outcome.content, { bom: false, eol: "\r\n" }), "one\r\n2\r\nthree\r\n");
    }
  });
  test("an LF file stays LF even if new_string has CRLF; mixed files are left alone", () => {
    const n = normalizeForEdit("a\nb\n", "b\r\n", "c\r\nd\r\n");
    assert.equal(replace(n.content, n.oldString, n.newString).content, "a\nc\nd\n");
    assert.equal(detectEol("a\r\nb\nc"), "mixed");
    assert.equal(detectEol("no newline"), "\n");
  });
  test("the BOM is put back", () => {
    assert.equal(restoreShape("x\n", { bom: true, eol: "\n" }), "\uFEFFx\n");
  });
});

describe("replacementDiff", () => {
  test("shows the changed lines with context and hunk headers", () => {
    const before = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n";
    const outcome = replace(before, "5\n", "five\n");
    assert.equal(
      replacementDiff("f.txt", before, outcome.content, outcome.replacements),
      "--- f.txt\n+++ f.txt\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8",
    );
  });
  test("a deleted line is only a minus line; far-apart changes get separate hunks", () => {
    const before = "a\nb\nc\n";
    const del = replace(before, "b\n", "");
    assert.equal(
      replacementDiff("f", before, del.content, del.replacements),
      "--- f\n+++ f\n@@ -1,3 +1,2 @@\n a\n-b\n c",
    );
    const lines = Array.from({ length: 30 }, (_, i) => `line ${i}`);
    const text = `${lines.join("\n")}\n`;
    const all = replace(text, "line 2\n", "two\n");
    const twice = replace(all.content, "line 25", "twenty-five");
    const diff = replacementDiff("f", all.content, twice.content, twice.replacements);
    assert.equal((diff.match(/^@@/gm) ?? []).length, 1);
    const both = replace(text.replace("line 25", "line 2 "), "line 2", "X", true);
    assert.equal((replacementDiff("f", text, both.content, both.replacements).match(/^@@/gm) ?? []).length, 2);
  });
  test("deleting everything leaves no phantom empty line", () => {
    const outcome = replace("a\nb\n", "a\nb\n", "");
    assert.equal(
      replacementDiff("f", "a\nb\n", outcome.content, outcome.replacements),
      "--- f\n+++ f\n@@ -1,2 +0,0 @@\n-a\n-b",
    );
  });
  test("a large diff is cut with a note", () => {
    const before = Array.from({ length: 200 }, (_, i) => `x${i}`).join("\n");
    const outcome = replace(before, "x", "y", true);
    const diff = replacementDiff("f", before, outcome.content, outcome.replacements, { maxLines: 20 });
    assert.equal(diff.split("\n").length, 2 + 20 + 1);
    assert.match(diff, /diff cut: \d+ more lines/);
  });
});

describe("withoutResultDiff: a result's text for displays that show the diff themselves", () => {
  const diff = "@@ -1,2 +1,2 @@\n a\n-b\n+c";
  test("edit's result as it is now (no header: the first line names the file), diagnostics kept", () => {
    const text = `Successfully edited /w/f.ts\nReplaced 1 occurrence (exact match).\n\n${diff}\n\n1 new error:\nf.ts:2:1 error TS1: x`;
    assert.equal(
      withoutResultDiff(text),
      "Successfully edited /w/f.ts\nReplaced 1 occurrence (exact match).\n1 new error:\nf.ts:2:1 error TS1: x",
    );
    assert.equal(
      withoutResultDiff(`Successfully edited /w/f.ts\nReplaced 1 occurrence.\n\n${diff}`),
      "Successfully edited /w/f.ts\nReplaced 1 occurrence.",
    );
  });
  test("results stored before, with the ---/+++ header, and text without a diff", () => {
    assert.equal(
      withoutResultDiff(`Successfully edited f\n\n--- f\n+++ f\n${diff}\n… (diff cut: 3 more lines)`),
      "Successfully edited f",
    );
    const plain = "Successfully edited f\n\n@@ is not a hunk here";
    assert.equal(withoutResultDiff(plain), plain);
  });
});
