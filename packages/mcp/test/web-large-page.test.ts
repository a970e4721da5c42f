import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, test } from "node:test";
import { htmlToMarkdown } from "../src/web/convert.js";

// The large-page extractor normally runs only on pages with thousands of elements; `largePageElements: 0` sends
// the realistic fixtures through it, so it is held to the same essentials as Readability: the article's
// headings, lists, code and tables kept, the site's chrome dropped.
const FIXTURES = path.join(import.meta.dirname, "fixtures", "web");
const BASE = "http://127.0.0.1:8080/articles/page.html";
const large = (name: string) =>
  htmlToMarkdown(readFileSync(path.join(FIXTURES, name), "utf8"), BASE, { largePageElements: 0 }).markdown;

const CASES: Array<{ fixture: string; keeps: RegExp[]; drops: string[] }> = [
  {
    fixture: "news.html",
    keeps: [
      /^# City Council Approves Riverside Transit Plan\n/,
      /## What the plan includes/,
      /- A 3\.2-mile protected bike corridor from Mill Street to Harbor Park/,
      /> We heard from nurses, students and shift workers/,
      /Construction is expected to begin in spring 2025/,
    ],
    drops: ["Sports Scores Live", "Advertisement", "Accept all cookies", "All rights reserved", "Most Read"],
  },
  {
    fixture: "docs.html",
    keeps: [
      /^# Configuring the cache/,
      /```yaml\ncache:\n {2}backend: redis/,
      /```python\nfrom quiver import cache/,
      /\| Option +\| Default +\| Description +\|/,
    ],
    drops: ["Writing plugins", "Copyright"],
  },
  {
    fixture: "blog.html",
    keeps: [/1\. Tag slow integration tests and run them in their own job\n2\. Shard unit tests/, /```yaml\n- uses:/],
    drops: ["First!!!", "Hacker News"],
  },
  {
    fixture: "wiki.html",
    keeps: [/\| Kingdom +\| Animalia +\|/, /\| Wingspan +\| 68–76 cm +\| 70–80 cm +\|/, /## Description/],
    drops: ["Random article", "Create account", "Privacy policy"],
  },
  {
    fixture: "heavy-chrome.html",
    keeps: [/a page turn now takes 180 milliseconds/, /\| Price +\| \$179 +\|/, /## Should you buy it\?/],
    drops: ["Gaming Reviews", "Buy the new SuperPhone", "847 partners", "Doctors hate", "Sign me up"],
  },
  {
    fixture: "release-notes.html",
    keeps: [/- Plugins:\s*\n {2}- `transform\(\)` hooks/, /```bash\nnpx @tern\/upgrade@5 --write/],
    drops: ["Edit this page on GitHub"],
  },
  {
    fixture: "lazy-images.html",
    keeps: [/photos\/faroe\/mulafossur-waterfall\.jpg/, /photos\/faroe\/puffins-mykines\.jpg/],
    drops: ["data:image/gif", "placeholder-1x1"],
  },
];

describe("large-page extraction on the realistic fixtures", () => {
  for (const { fixture, keeps, drops } of CASES) {
    test(`${fixture}: the article's essentials are kept and the chrome dropped`, () => {
      const markdown = large(fixture);
      for (const pattern of keeps) assert.match(markdown, pattern);
      for (const chrome of drops) assert.ok(!markdown.includes(chrome), `chrome "${chrome}" is dropped`);
    });
  }

  test("a huge index page with no prose falls back to the whole body (links kept)", () => {
    const rows = Array.from({ length: 50 }, (_, i) => `<tr><td><a href="f${i}.csv">f${i}.csv</a></td><td>1K</td></tr>`);
    const html = `<html><head><title>Index of /d</title></head><body><h1>Index of /d</h1><table>${rows.join("")}</table></body></html>`;
    const markdown = htmlToMarkdown(html, BASE, { largePageElements: 0 }).markdown;
    assert.match(markdown, /\[f49\.csv\]\(http:\/\/127\.0\.0\.1:8080\/articles\/f49\.csv\)/);
  });
});
