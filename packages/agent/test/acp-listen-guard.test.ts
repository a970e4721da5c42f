// Who may talk to `crow acp --listen` (attack tests): without the token, with a wrong one, with a foreign Host (DNS
// rebinding) or a foreign Origin (a web page opening a WebSocket), nothing reaches the agent; both transports.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { request } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
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
    {
      name: "an opaque Origin (a file:// or sandboxed page)",
      headers: () => ({ ...bearer(), Origin: "null" }),
      status: 403,
      says: /Origin "null" may not use this agent/,
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
    // As the README says: a loopback name on any port or scheme (the token is still required).
    assert.equal((await post(f.server.url, { ...bearer(), Origin: "http://localhost:5173" })).status, 200);
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

  test("a token shorter than 32 characters is refused, from --token-file or CROW_ACP_TOKEN, saying how to make one", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "crow-token-"));
    try {
      const file = path.join(dir, "token");
      await writeFile(file, "x\n", { mode: 0o600 });
      const env = { ...process.env, CROW_ACP_TOKEN: "" };
      const fromFile = spawnSync(process.execPath, [CROW_BIN, "acp", "--listen", "127.0.0.1:0", "--token-file", file], {
        encoding: "utf8",
        env,
        timeout: 30_000,
      });
      assert.equal(fromFile.status, 2, fromFile.stderr);
      assert.match(fromFile.stderr, /token from --token-file .* has 1 character; .*at least 32/);
      assert.match(fromFile.stderr, /openssl rand -hex 32 > .*token/);
      assert.doesNotMatch(fromFile.stderr, /listening on/);
      const fromEnv = spawnSync(process.execPath, [CROW_BIN, "acp", "--listen", "127.0.0.1:0"], {
        encoding: "utf8",
        env: { ...env, CROW_ACP_TOKEN: "a".repeat(31) },
        timeout: 30_000,
      });
      assert.equal(fromEnv.status, 2, fromEnv.stderr);
      assert.match(fromEnv.stderr, /token from CROW_ACP_TOKEN has 31 characters; .*at least 32/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test("a --token-file other users can read is served with a warning saying to chmod 600 it; a 0600 one is not", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "crow-token-"));
    try {
      const token = randomBytes(24).toString("base64url");
      for (const mode of [0o644, 0o600]) {
        const file = path.join(dir, `token-${mode.toString(8)}`);
        await writeFile(file, `${token}\n`);
        await chmod(file, mode);
        const { server, close } = await startListenSetup({ token, args: ["--token-file", file] });
        try {
          assert.equal((await post(server.url, { Authorization: `Bearer ${token}` })).status, 200);
          const warned = /warning: --token-file .* can be read or written by other users \(mode 0644\).*chmod 600/;
          if (mode === 0o644) assert.match(server.stderr(), warned);
          else assert.doesNotMatch(server.stderr(), /warning: --token-file/);
        } finally {
          await close();
        }
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
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
