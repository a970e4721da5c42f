import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { callTool, connectStdio, type McpConnection, type TempWorkspace, tempWorkspace } from "@crow/testkit";

/**
 * A SearXNG look-alike on 127.0.0.1: `GET /search?q=…&format=json`, answering by query so that one server covers
 * every case. It records the queries it saw and the most requests it had in flight at once.
 */
function startSearxng(): Promise<{
  url: string;
  seen: string[];
  maxInFlight: () => number;
  close: () => Promise<void>;
}> {
  const seen: string[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    const q = url.searchParams.get("q") ?? "";
    seen.push(q);
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    res.on("close", () => inFlight--);
    const json = (body: unknown) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    if (url.pathname !== "/search" || url.searchParams.get("format") !== "json") {
      res.writeHead(404);
      return res.end();
    }
    // Every answer waits a little so that parallel queries overlap on the server.
    setTimeout(() => {
      switch (q) {
        case "common kestrel":
          return json({
            query: q,
            number_of_results: 0,
            results: [
              {
                url: "https://en.wikipedia.org/wiki/Common_kestrel",
                title: "Common kestrel - Wikipedia",
                content: "The common kestrel is a bird of prey species belonging to the kestrel group.",
                engine: "wikipedia",
                engines: ["wikipedia", "duckduckgo"],
                score: 2.5,
                category: "general",
                publishedDate: null,
              },
              {
                url: "https://www.rspb.org.uk/birds-and-wildlife/kestrel",
                title: "Kestrel Bird Facts",
                content: "Kestrels hover over roadside verges.",
              },
              { url: "https://example.org/third", title: "Third result", content: "third" },
            ],
            answers: [{ answer: "Falco tinnunculus", url: "https://www.wikidata.org/wiki/Q25332" }],
            infoboxes: [
              {
                infobox: "Common kestrel",
                id: "https://en.wikipedia.org/wiki/Common_kestrel",
                content: "Species of bird of prey",
                urls: [{ title: "Wikipedia", url: "https://en.wikipedia.org/wiki/Common_kestrel" }],
                engine: "wikipedia",
              },
            ],
            suggestions: [],
            unresponsive_engines: [],
          });
        case "old searx":
          // Older versions: answers as plain strings; results with missing fields.
          return json({ query: q, results: [{ url: "https://old.example/" }, { title: "no url" }], answers: ["42"] });
        case "zzqx nothing":
          return json({
            query: q,
            number_of_results: 0,
            results: [],
            answers: [],
            infoboxes: [],
            suggestions: ["zzq nothing"],
            unresponsive_engines: [
              ["google", "timeout"],
              ["brave", "too many requests"],
            ],
          });
        case "forbidden":
          res.writeHead(403, { "content-type": "text/html" });
          return res.end("<html><body>403 Forbidden</body></html>");
        case "crash":
          res.writeHead(500, { "content-type": "text/html" });
          return res.end("<html><body>Internal Server Error</body></html>");
        case "garbage":
          res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
          return res.end("<!DOCTYPE html><html><body>Welcome to my homepage</body></html>");
        case "slow":
          return; // never answers; the client's timeout must end it
        default:
          return json({ query: q, results: [] });
      }
    }, 100);
  });
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://127.0.0.1:${port}`,
        seen,
        maxInFlight: () => maxInFlight,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}

describe("web_search through crow-mcp over stdio", () => {
  let ws: TempWorkspace;
  let mcp: McpConnection;
  let searxng: Awaited<ReturnType<typeof startSearxng>>;
  const search = (args: Record<string, unknown>) => callTool(mcp.client, "web_search", args);

  before(async () => {
    ws = await tempWorkspace();
    searxng = await startSearxng();
    mcp = await connectStdio({ cwd: ws.dir, env: { SEARXNG_URL: searxng.url, CROW_WEB_TIMEOUT: "2" } });
  });
  after(async () => {
    await mcp.close();
    await searxng.close();
    await ws.cleanup();
  });

  test("is listed with a real description (upstream published none) and its two parameters", async () => {
    const { tools } = await mcp.client.listTools();
    const tool = tools.find((t) => t.name === "web_search");
    assert.ok(tool);
    assert.ok((tool.description ?? "").length > 40);
    const queries = tool.inputSchema.properties?.queries as { description?: string } | undefined;
    assert.match(queries?.description ?? "", /parallel/);
    assert.deepEqual(Object.keys(tool.inputSchema.properties ?? {}).sort(), ["limit", "queries"]);
    assert.deepEqual(tool.inputSchema.required, ["queries"]);
    assert.equal(tool.annotations?.openWorldHint, true);
  });

  test("results and infoboxes in upstream's format, limited per query", async () => {
    const result = await search({ queries: ["common kestrel"], limit: 2 });
    assert.equal(result.isError, undefined);
    assert.equal(
      result.text,
      "Query:\ncommon kestrel\n\nResults:\n" +
        "Answer: Falco tinnunculus (https://www.wikidata.org/wiki/Q25332)\n\n" +
        "Infobox: Common kestrel\nID: https://en.wikipedia.org/wiki/Common_kestrel\nContent: Species of bird of prey\n" +
        "Links: Wikipedia <https://en.wikipedia.org/wiki/Common_kestrel>\n\n" +
        "Title: Common kestrel - Wikipedia\nURL: https://en.wikipedia.org/wiki/Common_kestrel\n" +
        "Content: The common kestrel is a bird of prey species belonging to the kestrel group.\n\n" +
        "Title: Kestrel Bird Facts\nURL: https://www.rspb.org.uk/birds-and-wildlife/kestrel\nContent: Kestrels hover over roadside verges.\n\n",
    );
  });

  test("several queries run in parallel and come back in the order asked", async () => {
    const result = await search({ queries: ["common kestrel", "old searx", "zzqx nothing"] });
    const order = ["Query:\ncommon kestrel", "Query:\nold searx", "Query:\nzzqx nothing"].map((q) =>
      result.text.indexOf(q),
    );
    assert.ok(
      order.every((p, i) => p >= 0 && (i === 0 || p > (order[i - 1] ?? -1))),
      result.text,
    );
    assert.ok(searxng.maxInFlight() >= 3, `the server had ${searxng.maxInFlight()} requests in flight at once`);
  });

  test("older answer formats and missing fields are tolerated", async () => {
    const result = await search({ queries: ["old searx"] });
    assert.equal(
      result.text,
      "Query:\nold searx\n\nResults:\nAnswer: 42\n\nTitle: https://old.example/\nURL: https://old.example/\nContent: \n\n",
    );
  });

  test("empty results say 'No results found' and which engines did not respond", async () => {
    const result = await search({ queries: ["zzqx nothing"] });
    assert.equal(result.isError, undefined);
    assert.equal(
      result.text,
      "Query:\nzzqx nothing\n\nResults:\nNo results found\n" +
        "Engines that did not respond: google (timeout), brave (too many requests)\nSuggestions: zzq nothing\n",
    );
  });

  test("403 explains that the json format must be enabled in settings.yml, and shows the lines", async () => {
    const result = await search({ queries: ["forbidden"] });
    assert.equal(result.isError, true);
    assert.match(result.text, /refused the JSON API \(HTTP 403 Forbidden\): the json output format is not enabled/);
    assert.match(result.text, /search:\n {4}formats:\n {6}- html\n {6}- json/);
  });

  test("a failing query is reported inline while the others keep their results", async () => {
    const result = await search({ queries: ["crash", "common kestrel", "garbage", "slow"] });
    assert.equal(result.isError, undefined, "some queries succeeded");
    assert.match(
      result.text,
      /Query:\ncrash\n\nError: SearXNG at http:\/\/127\.0\.0\.1:\d+ failed \(HTTP 500 Internal Server Error\)/,
    );
    assert.match(result.text, /Title: Common kestrel - Wikipedia/);
    assert.match(
      result.text,
      /Query:\ngarbage\n\nError: .*not a valid JSON search result \(content type text\/html; charset=utf-8, starting with "<!DOCTYPE html>/,
    );
    assert.match(result.text, /Query:\nslow\n\nError: SearXNG at .* did not answer within 2 s/);
  });

  test("invalid arguments are refused by the schema", async () => {
    const result = await search({ queries: [] });
    assert.equal(result.isError, true);
  });
});

describe("web_search without a running SearXNG", () => {
  test("connection refused explains how to start SearXNG, once for all queries", async () => {
    const server = http.createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const ws = await tempWorkspace();
    const mcp = await connectStdio({ cwd: ws.dir, env: { SEARXNG_URL: `http://127.0.0.1:${port}` } });
    try {
      const result = await callTool(mcp.client, "web_search", { queries: ["a", "b"] });
      assert.equal(result.isError, true);
      assert.match(result.text, /^Error: web_search failed for "a", "b"\./);
      assert.match(
        result.text,
        /Could not connect to SearXNG at http:\/\/127\.0\.0\.1:\d+ \(connection refused\)\. Is SearXNG running\?/,
      );
      assert.match(result.text, /docker run .*searxng\/searxng/);
      assert.equal(result.text.match(/connection refused/g)?.length, 1, "stated once");
    } finally {
      await mcp.close();
      await ws.cleanup();
    }
  });
});
