import assert from "node:assert/strict";
import type { LookupAddress } from "node:dns";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { fetchUrl } from "../src/web/http.js";

/** A site on 127.0.0.1: /page answers, /jump redirects to /landing on the same name; requests are counted. */
function startSite(): Promise<{ port: number; hits: Map<string, number>; close: () => Promise<void> }> {
  const hits = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const pathname = new URL(req.url ?? "/", "http://x").pathname;
    hits.set(pathname, (hits.get(pathname) ?? 0) + 1);
    if (pathname === "/jump") {
      res.writeHead(302, { location: `http://localhost:${(server.address() as AddressInfo).port}/landing` });
      res.end();
      return;
    }
    res.writeHead(200, { "content-type": "text/plain" });
    res.end(`served ${pathname}`);
  });
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () =>
      resolve({
        port: (server.address() as AddressInfo).port,
        hits,
        close: () => new Promise<void>((done) => server.close(() => done())),
      }),
    );
  });
}

/**
 * A rebinding DNS server: the first question is answered with 127.0.0.1 and every later one with 169.254.169.254.
 * It records what it answered, for every question.
 */
function rebindingResolver() {
  const answered: string[] = [];
  const resolve = async (_hostname: string): Promise<LookupAddress[]> => {
    const address = answered.length === 0 ? "127.0.0.1" : "169.254.169.254";
    answered.push(address);
    return [{ address, family: 4 }];
  };
  return { resolve, answered };
}

const limits = { timeoutMs: 10_000, maxBytes: 1024 * 1024, maxRedirects: 5 };

describe("web_fetch against a rebinding DNS answer", () => {
  let site: Awaited<ReturnType<typeof startSite>>;
  before(async () => {
    site = await startSite();
  });
  after(() => site.close());

  test("the address checked is the address connected to: one question per connection, a link-local answer refused", async () => {
    const dns = rebindingResolver();
    const url = `http://localhost:${site.port}/page`;
    const first = await fetchUrl(url, { ...limits, resolve: dns.resolve });
    assert.equal(Buffer.from(first.body).toString(), "served /page");
    // Checked and connected with one answer: a second question could have been answered with the metadata address.
    assert.deepEqual(dns.answered, ["127.0.0.1"]);
    await assert.rejects(
      fetchUrl(url, { ...limits, resolve: dns.resolve }),
      new RegExp(
        `^Error: Refused to fetch ${url.replace(/[/.]/g, "\\$&")}: localhost resolves to 169\\.254\\.169\\.254, a link-local address`,
      ),
    );
    assert.equal(site.hits.get("/page"), 1, "the refused fetch never reached a server");
  });

  test("a redirect hop whose name now resolves to a link-local address is refused before connecting", async () => {
    const dns = rebindingResolver();
    await assert.rejects(
      fetchUrl(`http://localhost:${site.port}/jump`, { ...limits, resolve: dns.resolve }),
      /Refused to fetch http:\/\/localhost:\d+\/landing: localhost resolves to 169\.254\.169\.254, a link-local address/,
    );
    assert.deepEqual(dns.answered, ["127.0.0.1", "169.254.169.254"]);
    assert.equal(site.hits.get("/jump"), 1);
    assert.equal(site.hits.get("/landing"), undefined);
  });
});
