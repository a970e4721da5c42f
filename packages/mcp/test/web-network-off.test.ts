// web_fetch while the session's network is off (sandbox on, `network: false`): the shell reaches nothing, so web_fetch
// must not be its way to the host's loopback services or the local network. Attacks through the real crow-mcp (stdio)
// with the policy a session sends; the servers are on 127.0.0.1. With the network on, loopback stays reachable.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { CROW_MCP_BIN, connectStdio, type McpConnection, type TempWorkspace, tempWorkspace } from "@crow/testkit";

const OFF = { mode: "read-only", writable: [], readOnly: [], network: false };
const ON = { mode: "workspace-write", writable: [], readOnly: [], network: true };

describe("web_fetch with the session's network off", () => {
  let ws: TempWorkspace;
  let client: McpConnection;
  let server: http.Server;
  let port = 0;
  let hits = 0;

  before(async () => {
    ws = await tempWorkspace();
    client = await connectStdio({ cwd: ws.dir });
    server = http.createServer((req, res) => {
      hits++;
      if (req.url === "/jump") {
        res.writeHead(302, { location: `http://127.0.0.1:${port}/page` });
        return res.end();
      }
      res.writeHead(200, { "content-type": "text/plain" });
      res.end("HOST-LOOPBACK-SERVICE");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(async () => {
    await client.close();
    server.close();
    await ws.cleanup();
  });

  const call = (url: string, policy: object) =>
    client.client.callTool({ name: "web_fetch", arguments: { url }, _meta: { "crow/sandbox": policy } }) as Promise<{
      content: Array<{ type: string; text?: string }>;
      isError?: boolean;
    }>;
  const textOf = (result: { content: Array<{ text?: string }> }) => result.content.map((c) => c.text ?? "").join("\n");

  test("loopback, private and unspecified addresses are refused, by name, literal or IPv6 form, before connecting", async () => {
    const before = hits;
    for (const url of [
      `http://127.0.0.1:${port}/page`,
      `http://localhost:${port}/page`,
      `http://[::ffff:127.0.0.1]:${port}/page`,
      `http://[::1]:${port}/page`,
      `http://2130706433:${port}/page`,
      `http://127.1:${port}/page`,
      `http://0.0.0.0:${port}/page`,
      `http://[::]:${port}/page`,
      "http://10.1.2.3/",
      "http://172.16.0.1/",
      "http://192.168.1.1/",
      "http://[fc00::1]/",
      "http://[fd12:3456::1]/",
      `http://[::127.0.0.1]:${port}/page`,
    ]) {
      const result = await call(url, OFF);
      const text = textOf(result);
      assert.equal(result.isError, true, `${url}: ${text}`);
      assert.match(text, /refuses to contact while the session's network is off/, `${url}: ${text}`);
      assert.doesNotMatch(text, /HOST-LOOPBACK-SERVICE/);
    }
    assert.equal(hits, before, "no refused fetch reached the server");
  });

  test("with the network on (or the sandbox off) loopback stays reachable, as before", async () => {
    assert.match(textOf(await call(`http://127.0.0.1:${port}/page`, ON)), /HOST-LOOPBACK-SERVICE/);
    assert.match(
      textOf(await call(`http://localhost:${port}/jump`, { mode: "off", writable: [], readOnly: [], network: false })),
      /HOST-LOOPBACK-SERVICE/,
    );
  });

  test("a page fetched with the network on is not served from the cache once it is off", async () => {
    assert.match(textOf(await call(`http://127.0.0.1:${port}/cached`, ON)), /HOST-LOOPBACK-SERVICE/);
    const text = textOf(await call(`http://127.0.0.1:${port}/cached`, OFF));
    assert.match(text, /network is off/);
    assert.doesNotMatch(text, /HOST-LOOPBACK-SERVICE/);
  });
});

/** Whether this machine can make a network namespace with a user namespace (root, or unprivileged user namespaces). */
function canUnshareNet(): boolean {
  try {
    execFileSync("unshare", ["--net", "--map-root-user", "ip", "link", "set", "lo", "up"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

describe("web_fetch with the network off: a public page that redirects to loopback", () => {
  const fixture = path.join(import.meta.dirname, "fixtures", "netns-redirect.mjs");
  const run = (policy: object) =>
    JSON.parse(
      execFileSync(
        "unshare",
        ["--net", "--map-root-user", process.execPath, fixture, CROW_MCP_BIN, JSON.stringify(policy)],
        {
          encoding: "utf8",
        },
      ),
    ) as { text: string; secretHits: number };

  test("the redirect hop to 127.0.0.1 is refused, checked on the address connected to", {
    skip: !canUnshareNet(),
  }, () => {
    const off = run(OFF);
    assert.match(off.text, /Refused to fetch http:\/\/127\.0\.0\.1:\d+\/secret: 127\.0\.0\.1 is a loopback address/);
    assert.equal(off.secretHits, 0, "the loopback service was never contacted");
    // The same redirect with the network on is followed: the first hop's address is public, as for any site.
    const on = run(ON);
    assert.match(on.text, /LOOPBACK-ONLY SECRET/);
    assert.equal(on.secretHits, 1);
  });
});
