import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  blockAnchor,
  contextAware,
  escapeNormalized,
  exact,
  indentationFlexible,
  lineTrimmed,
  multiOccurrence,
  type Span,
  trimmedBoundary,
  unescapeString,
  whitespaceNormalized,
} from "../src/edit/index.js";

/** The matched texts, which is what a reader of a matcher's result cares about. */
function texts(content: string, spans: Span[]): string[] {
  return spans.map((s) => content.slice(s.start, s.end));
}

describe("exact", () => {
  test("finds every non-overlapping occurrence", () => {
    const content = "aaa foo foo";
    assert.deepEqual(
      exact(content, "foo").map((s) => s.start),
      [4, 8],
    );
    assert.deepEqual(exact("aaaa", "aa").length, 2);
  });
  test("an empty find matches nothing (upstream looped forever on it)", () => {
    assert.deepEqual(exact("abc", ""), []);
  });
});

describe("lineTrimmed", () => {
  const content = "function f() {\n    return 1;   \n}\n";
  test("matches whole lines that differ only in surrounding whitespace", () => {
    assert.deepEqual(texts(content, lineTrimmed(content, "return 1;")), ["    return 1;   "]);
    assert.deepEqual(texts(content, lineTrimmed(content, "  function f() {\n return 1;\n")), [
      "function f() {\n    return 1;   ",
    ]);
  });
  test("does not match part of a line or different text", () => {
    assert.deepEqual(lineTrimmed(content, "return"), []);
    assert.deepEqual(lineTrimmed(content, "return 2;"), []);
  });
  test("a find of blank lines only matches nothing", () => {
    assert.deepEqual(lineTrimmed("a\n\n\nb", "\n\n"), []);
  });
});

describe("blockAnchor", () => {
  const content = [
    "function total(items) {",
    "  let sum = 0;",
    "  for (const item of items) sum += item.price;",
    "  return sum;",
    "}",
    "",
  ].join("\n");
  test("accepts a block whose middle lines are similar, between exact first and last lines", () => {
    const find =
      "function total(items) {\n  let sum = 0;\n  for (const item of items) sum += item.cost;\n  return sum;\n}";
    assert.deepEqual(texts(content, blockAnchor(content, find)), [content.slice(0, -1)]);
  });
  test("accepts a block with a line more or less than the find", () => {
    const longer = [
      "function total(items) {",
      "  let sum = 0;",
      "  for (const item of items) {",
      "    sum += item.price * item.quantity;",
      "  }",
      "  log(sum);",
      "  return sum;",
      "}",
    ].join("\n");
    const find = longer.replace("  log(sum);\n", "");
    assert.deepEqual(texts(longer, blockAnchor(longer, find)), [longer]);
    assert.deepEqual(texts(find, blockAnchor(find, longer)), [find]);
  });
  test("needs three lines and non-blank anchors", () => {
    assert.deepEqual(blockAnchor(content, "function total(items) {\n}"), []);
    assert.deepEqual(blockAnchor("\nx\n\n", "\nx\n\n"), []);
  });
  test("refuses a single candidate whose middle is unrelated (opencode #14046)", () => {
    const find = "function total(items) {\n  const rows = await db.query(sql);\n  await cache.flush(rows, ttl);\n}";
    assert.deepEqual(blockAnchor(content, find), []);
  });
  test("a trailing newline does not count as a line (opencode #14632)", () => {
    // Three "lines" by split, two real ones: upstream passed the 3-line guard, found no middle, scored 1.0
    // and replaced the whole function.
    assert.deepEqual(blockAnchor(content, "function total(items) {\n}\n"), []);
  });
  test("blank middle lines do not count against similarity (opencode #45199)", () => {
    const spaced = "a {\n  one();\n\n  two();\n\n  three();\n}\n";
    const find = "a {\n  one();\n  two();\n  three(1);\n}";
    assert.deepEqual(texts(spaced, blockAnchor(spaced, find)), [spaced.slice(0, -1)]);
  });
  test("two equally good candidates are both returned (ambiguous), a clearly better one alone", () => {
    const twice = `${content}${content}`;
    const find =
      "function total(items) {\n  let sum = 0;\n  for (const item of items) sum += item.cost;\n  return sum;\n}";
    assert.equal(blockAnchor(twice, find).length, 2);
    const other = content.replace("item.price", "entry.amount * entry.quantity + shipping(entry)");
    const spans = blockAnchor(`${other}${content}`, find);
    assert.equal(spans.length, 1);
    assert.equal(spans[0]?.start, other.length);
  });
  test("near-duplicate blocks: a copy much closer to one of them picks it, spacing differences aside", () => {
    const generated = Array.from(
      { length: 80 },
      (_, i) => `for (x of xs) {\n  total${i} += x.price * ${i % 7};\n}\n`,
    ).join("");
    const spans = blockAnchor(generated, "for (x of xs) {\n  total62 += x.price*6;\n}");
    assert.equal(spans.length, 1);
    assert.match(generated.slice(spans[0]?.start, spans[0]?.end), /total62 \+= x\.price \* 6;/);
  });
  test("among nested closing lines, picks the end that makes the most similar block", () => {
    const nested = "if (a) {\n  if (b) {\n    run();\n  }\n  done();\n}\n";
    const find = "if (a) {\n  if (b) {\n    run();\n  }\n  done(1);\n}";
    assert.deepEqual(texts(nested, blockAnchor(nested, find)), [nested.slice(0, -1)]);
  });
});

describe("whitespaceNormalized", () => {
  test("matches the same words across different whitespace and line breaks", () => {
    const content = "const x  =\tcompute(a,\n    b);\n";
    assert.deepEqual(texts(content, whitespaceNormalized(content, "const x = compute(a, b);")), [
      "const x  =\tcompute(a,\n    b);",
    ]);
  });
  test("a single word is left to other matchers", () => {
    assert.deepEqual(whitespaceNormalized("recount count", "  count "), []);
  });
  test("regex characters in the find are literal", () => {
    const content = "a.b (c) [d]*";
    assert.equal(whitespaceNormalized(content, "a.b  (c)\n[d]*").length, 1);
    assert.equal(whitespaceNormalized("axb (c) [d]*", "a.b (c) [d]*").length, 0);
  });
});

describe("indentationFlexible", () => {
  test("matches a block at another indentation only with the same relative indentation", () => {
    const content = "    if a:\n        x()\n    if a:\n    x()\n";
    const spans = indentationFlexible(content, "if a:\n    x()");
    assert.deepEqual(texts(content, spans), ["    if a:\n        x()"]);
  });
  test("blank lines inside the block may carry any whitespace", () => {
    const content = "\tone\n\t\n\ttwo\n";
    assert.equal(indentationFlexible(content, "one\n\ntwo").length, 1);
  });
});

describe("escapeNormalized", () => {
  test("unescapes in one pass: \\\\n stays a backslash-n", () => {
    assert.equal(unescapeString('a\\nb\\t\\"c\\"'), 'a\nb\t"c"');
    assert.equal(unescapeString("x\\\\ny"), "x\\ny");
  });
  test("finds an over-escaped find and unescapes new_string the same way", () => {
    const content = 'print("hello")\n';
    const spans = escapeNormalized(content, 'print(\\"hello\\")');
    assert.deepEqual(texts(content, spans), ['print("hello")']);
    assert.equal(spans[0]?.rewrite?.('print(\\"bye\\")'), 'print("bye")');
  });
  test("finds lines whose escapes unescape to the find", () => {
    const content = 'msg = "a\\tb"\nother\n';
    assert.deepEqual(texts(content, escapeNormalized(content, 'msg = "a\tb"')), ['msg = "a\\tb"']);
  });
  test("a window match of a find ending in a newline does not add a blank line", () => {
    const content = 'msg = "a\\tb"\nother\n';
    const spans = escapeNormalized(content, 'msg = "a\tb"\n');
    assert.equal(spans[0]?.rewrite?.('msg = "c"\n'), 'msg = "c"');
  });
  test("a find without escapes matches nothing new", () => {
    assert.deepEqual(escapeNormalized("plain text", "plain"), []);
  });
});

describe("trimmedBoundary", () => {
  test("matches the trimmed find and strips the same padding from new_string", () => {
    const content = "alpha\nbeta\n";
    const spans = trimmedBoundary(content, "\n\nbeta\n\n");
    assert.deepEqual(texts(content, spans), ["beta"]);
    assert.equal(spans[0]?.rewrite?.("\n\ngamma\n\n"), "gamma");
    assert.equal(spans[0]?.rewrite?.("gamma\n"), "gamma\n", "padding the find did not have is kept");
  });
  test("a find without surrounding whitespace matches nothing", () => {
    assert.deepEqual(trimmedBoundary("beta", "beta"), []);
  });
});

describe("contextAware", () => {
  const content = "function f() {\n  const a = 1;\n  return compute(a, b, c);\n}\n";
  test("accepts a same-size block where half of the middle lines are equal", () => {
    assert.equal(contextAware(content, "function f() {\n  const a = 1;\n  return 0;\n}").length, 1);
  });
  test("refuses when fewer than half match or the size differs", () => {
    assert.deepEqual(contextAware(content, "function f() {\n  const z = 9;\n  return 0;\n}"), []);
    assert.deepEqual(contextAware(content, "function f() {\n  const a = 1;\n}"), []);
  });
});

describe("multiOccurrence", () => {
  test("keeps only occurrences on token boundaries", () => {
    const content = "total = count + 1; recount + 1";
    assert.deepEqual(
      multiOccurrence(content, "count + 1").map((s) => s.start),
      [8],
    );
  });
  test("several whole-token occurrences stay several", () => {
    assert.equal(multiOccurrence("f(x); f(x);", "f(x);").length, 2);
  });
});
