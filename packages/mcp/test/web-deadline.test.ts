import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";

const FIXTURE = path.join(import.meta.dirname, "fixtures", "gc-deadline.ts");
const run = promisify(execFile);

/**
 * A server on 127.0.0.1 that answers at once and then drips its body a byte every 100 ms for 8 s (a bounded drip:
 * a request whose deadline never fires still ends, with the whole body).
 */
function startDrip(): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer((req, res) => {
    const json = (req.url ?? "").startsWith("/search");
    res.writeHead(200, { "content-type": json ? "application/json" : "text/plain" });
    res.write(json ? '{"results": [' : "drip ");
    let sent = 0;
    const timer = setInterval(() => {
      if (res.destroyed || sent++ >= 80) {
        clearInterval(timer);
        res.end(json ? "]}" : "end");
        return;
      }
      res.write(" ");
    }, 100);
    res.once("close", () => clearInterval(timer));
  });
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://127.0.0.1:${port}`,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}

/** Runs the fixture in a node with --expose-gc that forces collections while the request runs. */
async function underGc(kind: "fetch" | "search", url: string): Promise<string> {
  const { stdout } = await run(
    process.execPath,
    ["--expose-gc", "--import", "tsx", "--conditions=@crow/source", FIXTURE, kind, url, "1"],
    { cwd: import.meta.dirname },
  );
  return (JSON.parse(stdout.trim()) as { text: string }).text;
}

describe("web deadlines survive garbage collection", () => {
  let drip: Awaited<ReturnType<typeof startDrip>>;
  before(async () => {
    drip = await startDrip();
  });
  after(() => drip.close());

  test("web_fetch of a dripping page ends with the timeout error, though gc() runs throughout", async () => {
    const text = await underGc("fetch", `${drip.url}/page`);
    assert.match(text, /Error fetching .*: Timed out after 1 s without a complete answer\./);
  });

  test("web_search against a dripping SearXNG ends with the timeout error, though gc() runs throughout", async () => {
    const text = await underGc("search", drip.url);
    assert.match(text, /did not answer within 1 s/);
  });
});
