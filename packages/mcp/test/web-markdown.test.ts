import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { parseHTML } from "linkedom";
import { domToMarkdown, type MdNode } from "../src/web/markdown.js";

/** Markdown of an HTML fragment, serialized from linkedom's DOM the way web_fetch does. */
function md(html: string, base = "https://example.com/docs/page.html"): string {
  const { document } = parseHTML(`<!DOCTYPE html><html><body>${html}</body></html>`);
  return domToMarkdown(document.body as unknown as MdNode, { base });
}

describe("DOM → Markdown serializer", () => {
  test("headings and paragraphs are separate blocks, whitespace collapsed", () => {
    assert.equal(
      md("<h1>Title</h1>\n<p>First   line\n  continues.</p><h3> Sub <em>heading</em> </h3><p>Second.</p>"),
      "# Title\n\nFirst line continues.\n\n### Sub _heading_\n\nSecond.",
    );
  });

  test("emphasis, strong, strikethrough and inline code hug their text", () => {
    assert.equal(
      md("<p>a<strong> bold </strong>b <em>it</em>, <del>gone</del> and <code>x = `y`</code></p>"),
      "a **bold** b _it_, ~~gone~~ and `` x = `y` ``",
    );
  });

  test("links and images resolve against the base; spaces and parentheses are encoded; empty links vanish", () => {
    assert.equal(
      md(
        '<p><a href="../api/x (1).html">the API</a> <a href="#frag">here</a> <a href="javascript:void 0">js</a> <a href="/e"></a><img src="/i.png" alt="An image"></p>',
      ),
      "[the API](https://example.com/api/x%20%281%29.html) [here](#frag) js ![An image](https://example.com/i.png)",
    );
  });

  test("lazy images use their real source; data-URI placeholders are dropped", () => {
    assert.equal(
      md(
        '<p><img src="data:image/gif;base64,R0l" data-src="/real.jpg" alt="a"><img src="data:image/png;base64,xx" alt="b"></p>',
      ),
      "![a](https://example.com/real.jpg)",
    );
  });

  test("nested lists indent under their item; ordered lists honour start", () => {
    assert.equal(
      md("<ul><li>One</li><li>Two<ul><li>Two a</li><li>Two b<ol start='3'><li>deep</li></ol></li></ul></li></ul>"),
      "- One\n- Two\n  - Two a\n  - Two b\n    3. deep",
    );
    assert.equal(
      md("<ol><li><p>Para one</p><p>Para two</p></li><li>Next</li></ol>"),
      "1. Para one\n\n   Para two\n2. Next",
    );
  });

  test("blockquotes prefix every line, including nested blocks", () => {
    assert.equal(md("<blockquote><p>Quoted.</p><p>More.</p></blockquote>"), "> Quoted.\n>\n> More.");
  });

  test("code blocks keep their whitespace and language, and a longer fence when the code contains one", () => {
    assert.equal(
      md('<pre><code class="language-python">def f():\n    return "&lt;ok&gt;"\n</code></pre>'),
      '```python\ndef f():\n    return "<ok>"\n```',
    );
    assert.equal(md('<pre data-lang="md">```\nx\n```</pre>'), "````md\n```\nx\n```\n````");
    assert.equal(md("<ul><li>Run:<pre>npm test</pre></li></ul>"), "- Run:\n\n  ```\n  npm test\n  ```");
  });

  test("tables become GFM tables with padded columns and escaped pipes; one-column tables become paragraphs", () => {
    assert.equal(
      md(
        "<table><thead><tr><th>Name</th><th>Value</th></tr></thead><tbody><tr><td><code>a|b</code></td><td><a href='/v'>link</a></td></tr><tr><td colspan='2'>wide</td></tr></tbody></table>",
      ),
      "| Name | Value                         |\n| ---- | ----------------------------- |\n| a\\|b | [link](https://example.com/v) |\n| wide |                               |",
    );
    assert.equal(
      md("<table><tr><td>Layout one</td></tr><tr><td>Layout two</td></tr></table>"),
      "Layout one\n\nLayout two",
    );
  });

  test("rules, line breaks, and skipped elements", () => {
    assert.equal(
      md("<p>line one<br>line two</p><hr><script>evil()</script><button>Click</button><p>end</p>"),
      "line one  \nline two\n\n---\n\nend",
    );
  });

  test("Markdown syntax in text is escaped, snake_case is not", () => {
    assert.equal(
      md("<p># not a heading</p><p>a *star* [link] snake_case _under_ 1\\2</p><p>1. not a list</p>"),
      "\\# not a heading\n\na \\*star\\* \\[link\\] snake_case \\_under\\_ 1\\\\2\n\n1\\. not a list",
    );
  });

  test("inline elements wrapping blocks are flattened instead of breaking the paragraph", () => {
    assert.equal(
      md('<a href="/card"><div><h3>Card title</h3><p>Card text</p></div></a>'),
      "[Card title Card text](https://example.com/card)",
    );
  });

  test("a long run of inline content (a link farm) converts completely", () => {
    const links = Array.from({ length: 20_000 }, (_, i) => `<a href="/p/${i}">item ${i}</a> `).join("");
    const out = md(`<div>${links}</div>`);
    assert.ok(out.startsWith("[item 0](https://example.com/p/0) [item 1]"));
    assert.ok(out.endsWith("[item 19999](https://example.com/p/19999)"));
  });
});
