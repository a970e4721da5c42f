import type { MatcherName } from "../src/edit/index.js";

/** One case per matcher, each reaching that matcher through the whole cascade. */
export const CASCADE_CASES: ReadonlyArray<{
  matcher: MatcherName;
  content: string;
  old: string;
  new: string;
  expected: string;
}> = [
  {
    matcher: "exact",
    content: "let a = 1;\nlet b = 2;\n",
    old: "b = 2",
    new: "b = 3",
    expected: "let a = 1;\nlet b = 3;\n",
  },
  {
    matcher: "line-trimmed",
    content: "class A:\n    def f(self):  \n        return 1\n",
    old: "def f(self):\n    return 1\n",
    new: "def g(self):\n    return 2\n",
    expected: "class A:\n    def g(self):\n        return 2\n",
  },
  {
    matcher: "block-anchor",
    content:
      "function total(items) {\n  let sum = 0;\n  for (const item of items) sum += item.price;\n  return sum;\n}\n",
    old: "function total(items) {\n  let sum = 0;\n  for (const item of items) sum += item.cost;\n  return sum;\n}",
    new: "function total(items) {\n  return items.reduce((s, i) => s + i.price, 0);\n}",
    expected: "function total(items) {\n  return items.reduce((s, i) => s + i.price, 0);\n}\n",
  },
  {
    matcher: "whitespace-normalized",
    content: "  const x  =  compute(a, b);\n",
    old: "const x = compute(a, b);",
    new: "const x = compute(b, a);",
    expected: "  const x = compute(b, a);\n",
  },
  {
    matcher: "indentation-flexible",
    content: "def f():\n    if a:\n        x()\ndef g():\n    if a:\n      x()\n",
    old: "if a:\n    x()",
    new: "if b:\n    y()",
    expected: "def f():\n    if b:\n        y()\ndef g():\n    if a:\n      x()\n",
  },
  {
    matcher: "escape-normalized",
    content: 'print("hello")\n',
    old: 'print(\\"hello\\")',
    new: 'print(\\"bye\\")',
    expected: 'print("bye")\n',
  },
  {
    matcher: "trimmed-boundary",
    content: "alpha\nbeta\n",
    old: "\n\nbeta\n\n",
    new: "\n\ngamma\n\n",
    expected: "alpha\ngamma\n",
  },
  {
    matcher: "context-aware",
    content: "function f() {\n  const a = 1;\n  return someLongExpressionTheModelForgot(a, b, c, d);\n}\n",
    old: "function f() {\n  const a = 1;\n  return 0;\n}",
    new: "function f() {\n  return 1;\n}",
    expected: "function f() {\n  return 1;\n}\n",
  },
  {
    matcher: "multi-occurrence",
    content: "total = count + 1; recount + 1\n",
    old: "count + 1",
    new: "count + 2",
    expected: "total = count + 2; recount + 1\n",
  },
];
