import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { brotliCompressSync, gzipSync } from "node:zlib";
import { callTool, connectStdio, type McpConnection, type TempWorkspace, tempWorkspace } from "@crow/testkit";

const FIXTURES = path.join(import.meta.dirname, "fixtures", "web");

/** A site on 127.0.0.1 serving the HTML fixtures and the edge cases; it counts requests per path. */
function startSite(): Promise<{ url: string; hits: Map<string, number>; close: () => Promise<void> }> {
  const hits = new Map<string, number>();
  const longArticle = `<!DOCTYPE html><html><head><title>The Long Read</title></head><body><nav><a href="/">Home</a></nav><article><h1>The Long Read</h1>${Array.from(
    { length: 120 },
    (_, i) =>
      `<h2>Chapter ${i + 1}</h2><p>Chapter ${i + 1} begins here. ${"The river kept moving and the town kept changing around it. ".repeat(6)}</p>`,
  ).join("")}<p>THE END OF THE LONG READ.</p></article></body></html>`;
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    hits.set(url.pathname, (hits.get(url.pathname) ?? 0) + 1);
    const send = (status: number, type: string, body: string | Buffer, headers: Record<string, string> = {}) => {
      res.writeHead(status, { "content-type": type, ...headers });
      res.end(body);
    };
    const article = /^\/articles\/([\w.-]+\.html)$/.exec(url.pathname);
    if (article?.[1]) {
      const type = article[1] === "cp1251.html" ? "text/html; charset=windows-1251" : "text/html";
      return send(200, type, readFileSync(path.join(FIXTURES, article[1])));
    }
    const hop = /^\/hop\/(\d+)$/.exec(url.pathname);
    if (hop?.[1]) {
      const n = Number(hop[1]);
      res.writeHead(n > 0 ? 302 : 200, n > 0 ? { location: `/hop/${n - 1}` } : { "content-type": "text/plain" });
      return res.end(n > 0 ? "" : "arrived after the redirects");
    }
    switch (url.pathname) {
      case "/moved":
        res.writeHead(301, { location: "/articles/news.html" });
        return res.end();
      case "/to-metadata":
        res.writeHead(302, { location: "http://169.254.169.254/latest/meta-data/iam/" });
        return res.end();
      case "/long":
        return send(200, "text/html; charset=utf-8", longArticle);
      case "/data.json":
        return send(200, "application/json", JSON.stringify({ name: "crow", tools: ["web_fetch", "web_search"] }));
      case "/gzipped.txt":
        return send(200, "text/plain", gzipSync("unpacked from gzip"), { "content-encoding": "gzip" });
      case "/brotli.txt":
        return send(200, "text/plain", brotliCompressSync("unpacked from brotli"), { "content-encoding": "br" });
      case "/notes.txt":
        return send(200, "text/plain; charset=utf-8", "line one\nline two\n");
      case "/report.pdf":
        return send(200, "application/pdf", Buffer.concat([Buffer.from("%PDF-1.7\n"), Buffer.alloc(2048, 0x00)]));
      case "/pixel.png":
        return send(
          200,
          "image/png",
          Buffer.from(
            "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
            "base64",
          ),
        );
      case "/huge": {
        // 12 MB streamed without a Content-Length, so only the streaming cap can stop it.
        res.writeHead(200, { "content-type": "text/plain" });
        const chunk = Buffer.alloc(1024 * 1024, 0x61);
        let sent = 0;
        const pump = () => {
          while (sent < 12 && !res.destroyed) {
            sent++;
            if (!res.write(chunk)) return res.once("drain", pump);
          }
          if (!res.destroyed) res.end();
        };
        return pump();
      }
      case "/huge-declared":
        res.writeHead(200, { "content-type": "text/html", "content-length": String(50 * 1024 * 1024) });
        return res.end();
      case "/gone":
        return send(404, "text/html", "<html><body><h1>Not Found</h1></body></html>");
      default:
        return send(404, "text/plain", "no such page");
    }
  });
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://127.0.0.1:${port}`,
        hits,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}

/** A loopback port nothing listens on (a server bound it, then closed). */
async function closedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe("web_fetch through crow-mcp over stdio", () => {
  let ws: TempWorkspace;
  let mcp: McpConnection;
  let site: Awaited<ReturnType<typeof startSite>>;
  const fetchPage = (args: Record<string, unknown>) => callTool(mcp.client, "web_fetch", args);
  /** The Markdown of one fixture, fetched in one page. */
  const article = async (name: string) => {
    const result = await fetchPage({ url: `${site.url}/articles/${name}`, max_length: 100_000 });
    assert.equal(result.isError, undefined, result.text);
    return result.text;
  };

  before(async () => {
    ws = await tempWorkspace();
    site = await startSite();
    mcp = await connectStdio({ cwd: ws.dir });
  });
  after(async () => {
    await mcp.close();
    await site.close();
    await ws.cleanup();
  });

  test("is listed with a real description and read-only, open-world annotations", async () => {
    const { tools } = await mcp.client.listTools();
    const tool = tools.find((t) => t.name === "web_fetch");
    assert.ok(tool);
    assert.match(tool.description ?? "", /start_index/);
    assert.deepEqual(Object.keys(tool.inputSchema.properties ?? {}).sort(), [
      "max_length",
      "raw",
      "start_index",
      "url",
    ]);
    assert.equal(tool.annotations?.readOnlyHint, true);
    assert.equal(tool.annotations?.openWorldHint, true);
  });

  test("news article: title, byline, headings, paragraphs, list and quote kept; nav, ads, cookie banner and footer dropped", async () => {
    const text = await article("news.html");
    assert.ok(
      text.startsWith(`Contents of ${site.url}/articles/news.html:\n# City Council Approves Riverside Transit Plan\n`),
    );
    assert.match(text, /Dana Okafor/);
    assert.match(text, /## What the plan includes/);
    assert.match(text, /- A 3\.2-mile protected bike corridor from Mill Street to Harbor Park/);
    assert.match(text, /> We heard from nurses, students and shift workers/);
    assert.match(text, /Construction is expected to begin in spring 2025/);
    for (const chrome of [
      "Sports Scores Live",
      "Advertisement",
      "Accept all cookies",
      "Subscribe now",
      "All rights reserved",
      "Most Read",
      "Refinance",
    ]) {
      assert.ok(!text.includes(chrome), `chrome "${chrome}" is dropped`);
    }
  });

  test("documentation page: fenced code blocks with languages, inline code and the options table", async () => {
    const text = await article("docs.html");
    assert.match(text, /^# Configuring the cache/m);
    assert.match(text, /```yaml\ncache:\n {2}backend: redis\n {2}url: redis:\/\/localhost:6379\/0/);
    assert.match(text, /```python\nfrom quiver import cache\n\ndef on_article_saved\(article\):/);
    assert.match(text, /\| Option +\| Default +\| Description +\|/);
    assert.match(text, /`QUIVER_CACHE_`/);
    assert.ok(!text.includes("Writing plugins") && !text.includes("Copyright"), "sidebar and footer dropped");
  });

  test("blog post: ordered list, code, absolute image URL; comments and share links dropped", async () => {
    const text = await article("blog.html");
    assert.match(text, /^# How I cut our CI time from 40 to 9 minutes/m);
    assert.match(text, /1\. Tag slow integration tests and run them in their own job\n2\. Shard unit tests/);
    assert.match(text, /```yaml\n- uses: actions\/cache@v4/);
    assert.ok(
      text.includes(`![Bar chart of CI step durations before the changes](${site.url}/images/ci-timings-chart.png)`),
    );
    assert.ok(!text.includes("First!!!") && !text.includes("Hacker News") && !text.includes("Archive"));
  });

  test("wiki page: both tables become Markdown tables, edit links keep their query string, site navigation dropped", async () => {
    const text = await article("wiki.html");
    assert.match(text, /\| Kingdom +\| Animalia +\|/);
    assert.match(text, /\| Wingspan +\| 68–76 cm +\| 70–80 cm +\|/);
    assert.match(text, /## Description/);
    assert.match(text, /action=edit&section=1\)/);
    assert.ok(!text.includes("Random article") && !text.includes("Create account") && !text.includes("Privacy policy"));
  });

  test("relative links and images are made absolute against the page URL", async () => {
    const text = await article("relative-links.html");
    assert.ok(text.includes(`[introduction](${site.url}/guide/intro.html)`), text);
    assert.ok(text.includes(`[configuration reference](${site.url}/api/config.html#options)`));
    assert.ok(text.includes(`[the full list of changes](${site.url}/articles/changes.html)`));
    assert.ok(text.includes(`[porting checklist](${site.url}/articles/plugins/porting.html)`));
    assert.ok(text.includes(`(${site.url}/articles/img/migration-diagram.png)`));
    assert.ok(text.includes("[community forum](http://forum.lumen.dev/c/help)"), "protocol-relative link");
  });

  test("lazy-loaded images show their real source, not the placeholder", async () => {
    const text = await article("lazy-images.html");
    assert.ok(text.includes(`${site.url}/photos/faroe/mulafossur-waterfall.jpg`));
    assert.ok(text.includes(`${site.url}/photos/faroe/saksun-1600.jpg`));
    assert.ok(text.includes(`${site.url}/photos/faroe/puffins-mykines.jpg`));
    assert.ok(!text.includes("data:image/gif") && !text.includes("placeholder-1x1"));
  });

  test("non-UTF-8 pages: charset from <meta http-equiv> (windows-1252) and from the Content-Type header (windows-1251)", async () => {
    const french = await article("latin1.html");
    assert.match(french, /^# Recette : la tarte Tatin de grand-mère/m);
    assert.match(french, /des sœurs Tatin à Lamotte-Beuvron/);
    assert.match(french, /environ 6 € pour huit parts/);
    assert.match(french, /- 1 pâte brisée « pur beurre »/);
    assert.ok(!french.includes("Publicité"));
    const russian = await article("cp1251.html");
    assert.match(russian, /^# Самовар: история и устройство/m);
    assert.match(russian, /3\. Дождаться, пока самовар «запоёт»\./);
  });

  test("ad-heavy portal: the review, its table and verdict survive, the mega menu, rails, ads and widgets do not", async () => {
    const text = await article("heavy-chrome.html");
    assert.match(text, /^# Review: the Aurora E-reader finally fixes page-turn lag/m);
    assert.match(text, /a page turn now takes 180 milliseconds/);
    assert.match(text, /\| Price +\| \$179 +\|/);
    assert.match(text, /## Should you buy it\?/);
    for (const chrome of [
      "Gaming Reviews",
      "Trending story",
      "Buy the new SuperPhone",
      "847 partners",
      "Doctors hate",
      "Sign me up",
      "Advertise with us",
      "googletag",
    ]) {
      assert.ok(!text.includes(chrome), `chrome "${chrome}" is dropped`);
    }
  });

  test("release notes: nested lists and several fenced languages", async () => {
    const text = await article("release-notes.html");
    assert.match(text, /- Plugins:\s*\n {2}- `transform\(\)` hooks receive a `context` object/);
    assert.match(text, /```bash\nnpx @tern\/upgrade@5 --write\ngit diff --stat\n```/);
    assert.match(text, /```js\nexport default \{/);
    assert.ok(!text.includes("Edit this page on GitHub") && !text.includes("Community"));
  });

  test("a directory listing (no article) still comes out as a table of absolute links", async () => {
    const text = await article("index-page.html");
    assert.match(text, /^# Index of \/pub\/datasets\//m);
    assert.ok(text.includes(`[stations.json](${site.url}/articles/stations.json)`));
  });

  test("raw=true returns the page's real HTML, not Markdown", async () => {
    const result = await fetchPage({ url: `${site.url}/articles/news.html`, raw: true, max_length: 100_000 });
    assert.ok(result.text.startsWith(`Raw HTML from ${site.url}/articles/news.html:\n<!DOCTYPE html>`));
    assert.match(result.text, /<nav class="primary-nav" aria-label="Sections">/);
    assert.match(result.text, /<script>window\.dataLayer/);
  });

  test("a long page is paged with start_index from one download, and ends with 'No more content available'", async () => {
    const url = `${site.url}/long`;
    const first = await fetchPage({ url, max_length: 5000 });
    assert.match(first.text, /^Contents of http:\/\/127\.0\.0\.1:\d+\/long:\n# The Long Read\n/);
    const next = /Call web_fetch with start_index=(\d+) to get more content/.exec(first.text);
    assert.equal(next?.[1], "5000");
    let combined = first.text.slice(first.text.indexOf("\n") + 1, first.text.indexOf("\n\n<error>"));
    let start = 5000;
    for (;;) {
      const page = await fetchPage({ url, max_length: 5000, start_index: start });
      const body = page.text.slice(page.text.indexOf("\n") + 1);
      const cut = body.indexOf("\n\n<error>Content truncated");
      combined += cut === -1 ? body : body.slice(0, cut);
      if (cut === -1) break;
      start += 5000;
    }
    assert.ok(start >= 15_000, "the page spans several slices");
    assert.match(combined, /## Chapter 60\n\nChapter 60 begins here\./);
    assert.ok(combined.trimEnd().endsWith("THE END OF THE LONG READ."), "the last slice reaches the end");
    const past = await fetchPage({ url, start_index: 10_000_000 });
    assert.match(past.text, /<error>No more content available\./);
    assert.equal(site.hits.get("/long"), 1, "the server saw one request for all the pages");
  });

  test("redirects are followed (and reported); too many redirects are refused", async () => {
    const moved = await fetchPage({ url: `${site.url}/moved` });
    assert.match(
      moved.text,
      new RegExp(
        `^Contents of ${site.url}/moved \\(redirected to ${site.url}/articles/news\\.html\\):\\n# City Council`,
      ),
    );
    const five = await fetchPage({ url: `${site.url}/hop/5` });
    assert.match(five.text, /arrived after the redirects/);
    const loop = await fetchPage({ url: `${site.url}/hop/15` });
    assert.equal(loop.isError, true);
    assert.match(loop.text, /Too many redirects \(more than 10\)/);
  });

  test("HTTP errors are tool errors naming the status", async () => {
    const result = await fetchPage({ url: `${site.url}/gone` });
    assert.equal(result.isError, true);
    assert.match(
      result.text,
      /^Error fetching http:\/\/127\.0\.0\.1:\d+\/gone: HTTP 404 Not Found \(the page does not exist/,
    );
  });

  test("an oversize body is refused while streaming and when declared, without reading it all", async () => {
    const streamed = await fetchPage({ url: `${site.url}/huge` });
    assert.equal(streamed.isError, true);
    assert.match(streamed.text, /too large \(more than 10 MB; web_fetch reads at most 10 MB\)/);
    const declared = await fetchPage({ url: `${site.url}/huge-declared` });
    assert.equal(declared.isError, true);
    assert.match(declared.text, /too large \(50 MB/);
  });

  test("JSON and plain text pass through with their content type; a PDF is described, not dumped; an image is an image", async () => {
    const json = await fetchPage({ url: `${site.url}/data.json` });
    assert.equal(
      json.text,
      `Content type: application/json\nContents of ${site.url}/data.json:\n{"name":"crow","tools":["web_fetch","web_search"]}`,
    );
    const text = await fetchPage({ url: `${site.url}/notes.txt` });
    assert.match(text.text, /^Content type: text\/plain; charset=utf-8\n.*\nline one\nline two\n$/);
    const pdf = await fetchPage({ url: `${site.url}/report.pdf` });
    assert.equal(pdf.isError, undefined);
    assert.match(
      pdf.text,
      /^Content type: application\/pdf\n.* is a PDF document \(2 KB\), which cannot be shown as text\. .*curl .*pdftotext/,
    );
    assert.ok(!pdf.text.includes("%PDF"), "no raw bytes");
    const png = await fetchPage({ url: `${site.url}/pixel.png` });
    assert.equal(png.content[1]?.type, "image");
  });

  test("gzip and brotli bodies are decompressed", async () => {
    assert.match((await fetchPage({ url: `${site.url}/gzipped.txt` })).text, /\nunpacked from gzip$/);
    assert.match((await fetchPage({ url: `${site.url}/brotli.txt` })).text, /\nunpacked from brotli$/);
  });

  test("metadata and link-local addresses are refused, directly, by name and through a redirect", async () => {
    const direct = await fetchPage({ url: "http://169.254.169.254/latest/meta-data/" });
    assert.equal(direct.isError, true);
    assert.match(
      direct.text,
      /Refused to fetch http:\/\/169\.254\.169\.254\/latest\/meta-data\/: 169\.254\.169\.254 is a link-local address/,
    );
    const named = await fetchPage({ url: "http://metadata.google.internal/computeMetadata/v1/" });
    assert.match(
      named.text,
      /metadata\.google\.internal is a cloud metadata service, which web_fetch refuses to contact/,
    );
    const redirected = await fetchPage({ url: `${site.url}/to-metadata` });
    assert.equal(redirected.isError, true);
    assert.match(redirected.text, /Refused to fetch http:\/\/169\.254\.169\.254\/latest\/meta-data\/iam\//);
  });

  test("bad URLs and unreachable hosts give clear errors", async () => {
    const relative = await fetchPage({ url: "/etc/passwd" });
    assert.match(relative.text, /Invalid URL: \/etc\/passwd \(expected an absolute http:\/\/ or https:\/\/ URL\)/);
    const file = await fetchPage({ url: "file:///etc/passwd" });
    assert.match(file.text, /only http and https URLs can be fetched, not file:/);
    const closed = await fetchPage({ url: `http://127.0.0.1:${await closedPort()}/` });
    assert.equal(closed.isError, true);
    assert.match(closed.text, /Connection refused/);
  });
});
