import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, test } from "node:test";
import { blockedAddressReason, checkFetchTarget } from "../src/web/address.js";
import { TtlCache } from "../src/web/cache.js";
import { charsetFromMeta, decodeBody } from "../src/web/charset.js";
import { htmlToMarkdown, stripInert } from "../src/web/convert.js";
import { isHtml, paginate } from "../src/web/page.js";
import { formatOutcome, parseSearchResponse, searchEndpoint } from "../src/web/search.js";

const FIXTURES = path.join(import.meta.dirname, "fixtures", "web");
const fixture = (name: string) => readFileSync(path.join(FIXTURES, name));

describe("web address guard", () => {
  test("link-local and metadata addresses are refused, loopback and private networks are not", () => {
    for (const ip of [
      "169.254.169.254",
      "169.254.0.1",
      "fd00:ec2::254",
      "fe80::1",
      "::ffff:169.254.169.254",
      "::ffff:a9fe:a9fe",
      "100.100.100.200",
    ]) {
      assert.ok(blockedAddressReason(ip), `${ip} is refused`);
    }
    for (const ip of [
      "127.0.0.1",
      "::1",
      "::",
      "10.0.0.5",
      "192.168.1.10",
      "8.8.8.8",
      "2001:db8::1",
      "fd00::1",
      "64:ff9b::808:808",
      "2002:808:808::1",
      "::127.0.0.1",
    ]) {
      assert.equal(blockedAddressReason(ip), undefined, `${ip} is allowed`);
    }
  });

  test("network off (guard private): loopback, private, unspecified and their IPv6 forms refused; public allowed", () => {
    for (const ip of [
      "127.0.0.1",
      "127.255.0.9",
      "::1",
      "::",
      "0.0.0.0",
      "10.0.0.5",
      "172.16.0.1",
      "172.31.255.255",
      "192.168.1.10",
      "100.64.0.1",
      "fc00::1",
      "fd00::1",
      "::ffff:127.0.0.1",
      "::127.0.0.1",
      "64:ff9b::7f00:1",
      "2002:c0a8:101::1",
      "224.0.0.1",
      "255.255.255.255",
      "ff02::1",
      "169.254.169.254",
    ]) {
      assert.ok(blockedAddressReason(ip, "private"), `${ip} is refused`);
    }
    for (const ip of ["8.8.8.8", "1.1.1.1", "172.32.0.1", "192.169.0.1", "2606:4700::1111", "2001:db8::1"]) {
      assert.equal(blockedAddressReason(ip, "private"), undefined, `${ip} is allowed`);
    }
  });

  test("IPv6 forms that carry a link-local IPv4 address are refused: NAT64, 6to4, IPv4-compatible, Teredo", () => {
    const forms: Array<[string, RegExp]> = [
      ["64:ff9b::169.254.169.254", /NAT64/],
      ["64:ff9b::a9fe:a9fe", /NAT64/],
      ["64:ff9b:1::a9fe:a9fe", /NAT64/],
      ["2002:a9fe:a9fe::", /6to4/],
      ["2002:a9fe:a9fe:1::5", /6to4/],
      ["::169.254.169.254", /IPv4-compatible/],
      ["::a9fe:a9fe", /IPv4-compatible/],
      ["2001:0:a9fe:a9fe::1", /Teredo/],
      ["64:ff9b::6464:64c8", /Alibaba/],
    ];
    for (const [ip, form] of forms) {
      const reason = blockedAddressReason(ip) ?? "";
      assert.match(reason, /link-local|Alibaba/, `${ip} is refused`);
      assert.match(reason, form, `${ip}: ${reason}`);
    }
  });

  test("metadata host names, metadata IP literals and non-http schemes are refused before any connection", async () => {
    const refused = async (url: string, pattern: RegExp) => {
      const result = await checkFetchTarget(new URL(url));
      assert.equal(result.ok, false, url);
      assert.match(result.ok ? "" : result.reason, pattern);
    };
    await refused("http://metadata.google.internal/computeMetadata/v1/", /metadata service/);
    await refused("http://METADATA.google.internal./x", /metadata service/);
    await refused("http://169.254.169.254/latest/meta-data/", /link-local/);
    await refused("http://[fd00:ec2::254]/latest/meta-data/", /AWS IPv6 metadata/);
    await refused("http://[64:ff9b::a9fe:a9fe]/latest/meta-data/", /link-local .*NAT64/);
    await refused("file:///etc/passwd", /only http and https/);
    assert.deepEqual(await checkFetchTarget(new URL("http://127.0.0.1:8080/")), { ok: true });
    assert.deepEqual(await checkFetchTarget(new URL("http://localhost:8080/")), { ok: true });
  });
});

describe("web charset", () => {
  test("meta charset and http-equiv are found; a header charset wins over meta; a BOM wins over both", () => {
    assert.equal(charsetFromMeta(Buffer.from('<html><head><meta charset="Shift_JIS">')), "shift_jis");
    assert.equal(
      charsetFromMeta(Buffer.from('<meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1">')),
      "iso-8859-1",
    );
    const latin = Buffer.from([0x63, 0x61, 0x66, 0xe9]); // "café" in latin1
    assert.equal(decodeBody(latin, "text/html; charset=ISO-8859-1", true), "café");
    const utf8WithBom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from("naïve")]);
    assert.equal(decodeBody(utf8WithBom, "text/html; charset=windows-1251", true), "naïve");
    assert.equal(decodeBody(Buffer.from("plain ü"), undefined, false), "plain ü");
  });

  test("windows-1252 bytes 0x80-0x9F decode to € œ “ ” (not invisible control characters)", () => {
    const bytes = Buffer.from([0x80, 0x20, 0x9c, 0x20, 0x93, 0x71, 0x94, 0x20, 0x96]);
    assert.equal(decodeBody(bytes, "text/plain; charset=latin1", false), "€ œ “q” –");
  });

  test("HTML is recognized by content type, or sniffed when the type is missing or generic", () => {
    assert.equal(isHtml("text/html; charset=utf-8", Buffer.from("hello")), true);
    assert.equal(isHtml(undefined, Buffer.from("  <!DOCTYPE html><html>")), true);
    assert.equal(isHtml("text/plain", Buffer.from("<html lang=en>")), true);
    assert.equal(isHtml("application/json", Buffer.from("<html>")), false);
    assert.equal(isHtml("text/plain", Buffer.from("just text")), false);
  });
});

describe("web pagination", () => {
  const text = "abcdefghij";
  test("a full slice with more remaining names the next start_index", () => {
    const page = paginate("H:\n", text, 0, 4);
    assert.ok(page.startsWith("H:\nabcd\n\n<error>Content truncated"));
    assert.match(page, /Call web_fetch with start_index=4 to get more content/);
  });
  test("the last slice has no truncation notice, and past the end says no more content", () => {
    assert.equal(paginate("H:\n", text, 8, 4), "H:\nij");
    assert.match(paginate("H:\n", text, 10, 4), /<error>No more content available\. .*10 characters long/);
  });
});

describe("web page cache", () => {
  test("entries expire after the TTL and the oldest are evicted beyond the size budget", () => {
    let now = 0;
    const cache = new TtlCache<string>(
      1000,
      3,
      10,
      (v) => v.length,
      () => now,
    );
    cache.set("a", "12345");
    cache.set("b", "1234");
    assert.equal(cache.get("a"), "12345");
    cache.set("c", "12"); // 11 chars > 10: "a" goes
    assert.equal(cache.get("a"), undefined);
    assert.equal(cache.get("b"), "1234");
    now = 1500;
    assert.equal(cache.get("b"), undefined, "expired");
    cache.set("huge", "x".repeat(11));
    assert.equal(cache.get("huge"), undefined, "larger than the whole budget: not stored");
  });
});

describe("SearXNG answer parsing and formatting", () => {
  test("upstream's format: query, infobox, then Title/URL/Content per result up to the limit", () => {
    const search = parseSearchResponse({
      query: "rust",
      number_of_results: 0,
      results: [
        { url: "https://a.example/", title: "A", content: "first", engine: "ddg" },
        { url: "https://b.example/", title: "B", content: "second" },
        { url: "https://c.example/", title: "C", content: "third" },
      ],
      infoboxes: [{ infobox: "Rust", id: "https://www.rust-lang.org", content: "A language", urls: [] }],
    });
    assert.ok(search);
    assert.equal(
      formatOutcome({ query: "rust", ok: true, search }, 2),
      "Query:\nrust\n\nResults:\nInfobox: Rust\nID: https://www.rust-lang.org\nContent: A language\n\n" +
        "Title: A\nURL: https://a.example/\nContent: first\n\nTitle: B\nURL: https://b.example/\nContent: second\n\n",
    );
  });

  test("missing fields are tolerated and both answer formats are read", () => {
    const search = parseSearchResponse({
      results: [
        { url: "https://no-title.example/" },
        { title: "no url" },
        "junk",
        { url: "https://x.example/", title: "X", content: null },
      ],
      answers: ["42", { answer: "forty-two", url: "https://answers.example/" }],
      unresponsive_engines: [["google", "timeout"], { engine: "bing", error_type: "CAPTCHA" }],
    });
    assert.ok(search);
    assert.deepEqual(search.results, [
      { url: "https://no-title.example/", title: "https://no-title.example/", content: "" },
      { url: "https://x.example/", title: "X", content: "" },
    ]);
    assert.deepEqual(search.answers, [
      { answer: "42", url: "" },
      { answer: "forty-two", url: "https://answers.example/" },
    ]);
    assert.deepEqual(search.unresponsive, ["google (timeout)", "bing (CAPTCHA)"]);
    assert.equal(parseSearchResponse([1, 2]), undefined);
    assert.equal(parseSearchResponse("text"), undefined);
  });

  test("no results: upstream's line, plus which engines failed", () => {
    const search = parseSearchResponse({ results: [], unresponsive_engines: [["brave", "too many requests"]] });
    assert.ok(search);
    const text = formatOutcome({ query: "q", ok: true, search }, 10);
    assert.match(text, /Results:\nNo results found\nEngines that did not respond: brave \(too many requests\)\n/);
  });

  test("the endpoint keeps a base path and encodes the query", () => {
    assert.equal(
      searchEndpoint("http://host:8888/searxng", "a b&c").href,
      "http://host:8888/searxng/search?q=a+b%26c&format=json",
    );
  });
});

describe("HTML to Markdown (pure)", () => {
  const base = "http://docs.example.com/guide/page.html";

  test("scripts, styles, comments and SVG are stripped before parsing, JSON-LD is kept", () => {
    const html =
      '<p>a</p><script>if (a < b) { x = "<!--" }</script><!-- c --><style>p{}</style><svg><path d="M0"/></svg>' +
      '<script type="application/ld+json">{"headline":"h"}</script><p>b</p>';
    assert.equal(stripInert(html), '<p>a</p><script type="application/ld+json">{"headline":"h"}</script><p>b</p>');
  });

  test("a page without an article falls back to the body without navigation", () => {
    const html =
      "<html><head><title>Tiny</title></head><body><nav><a href='/x'>Menu item</a></nav><p>Only <a href='rel'>one</a> line.</p></body></html>";
    const page = htmlToMarkdown(html, base);
    assert.equal(page.title, "Tiny");
    assert.match(page.markdown, /^# Tiny\n\nOnly \[one\]\(http:\/\/docs\.example\.com\/guide\/rel\) line\.$/);
    assert.doesNotMatch(page.markdown, /Menu item/);
  });

  test("<base href> decides how relative links resolve", () => {
    const html = `<html><head><base href="https://cdn.example.net/v2/"><title>B</title></head><body><article><h1>B</h1><p>${"Text. ".repeat(60)}<a href="docs/intro">intro</a></p></article></body></html>`;
    assert.match(htmlToMarkdown(html, base).markdown, /\[intro\]\(https:\/\/cdn\.example\.net\/v2\/docs\/intro\)/);
  });

  test("the docs fixture keeps fenced code with its language, the options table and the ordered list", () => {
    const page = htmlToMarkdown(fixture("docs.html").toString("utf8"), base);
    assert.match(page.markdown, /```yaml\ncache:\n {2}backend: redis/);
    assert.match(page.markdown, /```python\nfrom quiver import cache/);
    assert.match(page.markdown, /\| ttl +\| 300 +\| Seconds before an entry expires +\|/);
    assert.match(page.markdown, /1\. Save the article\.\n2\. Invalidate its prefix\./);
    assert.doesNotMatch(page.markdown, /Frequently asked questions|Read the Docs|Search docs/);
  });

  test("a large article converts completely (chunked translation keeps every section, in order)", () => {
    const sections = Array.from(
      { length: 300 },
      (_, i) => `<h2>Part ${i}</h2><p>${"Lorem ipsum dolor sit amet, consectetur adipiscing elit. ".repeat(8)}</p>`,
    ).join("");
    const page = htmlToMarkdown(
      `<html><head><title>Long</title></head><body><article>${sections}</article></body></html>`,
      base,
    );
    const [first = -1, middle = -1, last = -1] = [0, 150, 299].map((i) => page.markdown.indexOf(`## Part ${i}\n`));
    assert.ok(first > 0 && first < middle && middle < last, "first, middle and last sections present, in order");
  });
});
