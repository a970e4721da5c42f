// Who may talk to `crow acp --listen` (attack tests): without the token, with a wrong one, with a foreign Host (DNS
// rebinding) or a foreign Origin (a web page opening a WebSocket), nothing reaches the agent; both transports.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { request } from "node:http";
import { describe, test } from "node:test";
import { CROW_BIN, connectRemote } from "@crow/testkit";
import { WebSocket } from "ws";
import { listenFixture, startListenSetup } from "./listen-helpers.js";

const INITIALIZE = JSON.stringify({
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: { protocolVersion: 1, clientCapabilities: {} },
});

/** A POST of initialize with these headers: its status and body. */
function post(url: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: "POST",
        headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream", ...headers },
      },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          body += chunk;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on("error", reject);
    req.end(INITIALIZE);
  });
}

/** A WebSocket upgrade with these headers: 101 when accepted, else the refusal's status and body. */
function upgrade(url: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url.replace(/^http/, "ws"), { headers });
    socket.on("open", () => {
      socket.close();
      resolve({ status: 101, body: "" });
    });
    socket.on("unexpected-response", (req, res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        body += chunk;
      });
      res.on("end", () => {
        req.destroy();
        resolve({ status: res.statusCode ?? 0, body });
      });
    });
    socket.on("error", (error) => {
      if (!/Unexpected server response/.test(error.message)) reject(error);
    });
  });
}

describe("crow acp --listen: the front door", () => {
  const f = listenFixture();

  const bearer = () => ({ Authorization: `Bearer ${f.server.token}` });
  const cases: Array<{ name: string; headers: () => Record<string, string>; status: number; says: RegExp }> = [
    { name: "no token", headers: () => ({}), status: 401, says: /Authorization: Bearer/ },
    {
      name: "a wrong token",
      headers: () => ({ Authorization: `Bearer ${f.server.token}x` }),
      status: 401,
      says: /token/,
    },
    {
      name: "a foreign Host (DNS rebinding)",
      headers: () => ({ ...bearer(), Host: "attacker.example:80" }),
      status: 403,
      says: /Host "attacker\.example:80" is not served here.*--allowed-host attacker\.example/,
    },
    {
      name: "a foreign Origin (a web page)",
      headers: () => ({ ...bearer(), Origin: "https://attacker.example" }),
      status: 403,
      says: /Origin "https:\/\/attacker\.example" may not use this agent/,
    },
  ];
  for (const c of cases) {
    test(`${c.name} is refused over HTTP and WebSocket`, async () => {
      const viaPost = await post(f.server.url, c.headers());
      assert.equal(viaPost.status, c.status);
      assert.match(viaPost.body, c.says);
      assert.doesNotMatch(viaPost.body, /protocolVersion/);
      const viaUpgrade = await upgrade(f.server.url, c.headers());
      assert.equal(viaUpgrade.status, c.status);
      assert.match(viaUpgrade.body, c.says);
    });
  }

  test("the token with a loopback Host and Origin is let in (the control)", async () => {
    const origin = new URL(f.server.url).origin;
    const viaPost = await post(f.server.url, { ...bearer(), Origin: origin });
    assert.equal(viaPost.status, 200);
    assert.match(viaPost.body, /protocolVersion/);
    assert.equal((await upgrade(f.server.url, { ...bearer(), Origin: origin })).status, 101);
  });

  test("the SDK's client with a wrong token cannot initialize", async () => {
    await assert.rejects(connectRemote(f.server, "http", { headers: { Authorization: "Bearer nope" } }));
  });

  test("only /acp is served", async () => {
    const other = await post(f.server.url.replace(/\/acp$/, "/other"), bearer());
    assert.equal(other.status, 404);
  });
});

describe("crow acp --listen: the token", () => {
  test("is never taken as a bare argument", () => {
    const run = spawnSync(process.execPath, [CROW_BIN, "acp", "--listen", "0", "--token", "abc"], { encoding: "utf8" });
    assert.equal(run.status, 2);
    assert.match(run.stderr, /never taken on the command line.*--token-file FILE or CROW_ACP_TOKEN/);
  });

  test("without --token-file or CROW_ACP_TOKEN, a token is made up and printed on stderr", async () => {
    const { server, close } = await startListenSetup({ token: null });
    try {
      assert.match(server.token, /^[A-Za-z0-9_-]{32}$/);
      assert.equal((await post(server.url, { Authorization: `Bearer ${server.token}` })).status, 200);
    } finally {
      await close();
    }
  });
});

describe("crow acp --listen: --allowed-host (the spelling of sessions serve and crow-mcp) and --allow-host", () => {
  const f = listenFixture({ args: ["--allowed-host", "one.example", "--allow-host", "two.example"] });

  test("each spelling lets its Host in; another Host is still refused", async () => {
    const bearer = { Authorization: `Bearer ${f.server.token}` };
    for (const host of ["one.example", "two.example"]) {
      const response = await post(f.server.url, { ...bearer, Host: host });
      assert.equal(response.status, 200, `${host}: ${response.body}`);
    }
    assert.equal((await post(f.server.url, { ...bearer, Host: "three.example" })).status, 403);
  });
});
