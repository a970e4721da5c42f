import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import http from "node:http";
import { after, before, describe, test } from "node:test";
import {
  CROW_MCP_BIN,
  callTool,
  connectStdio,
  type McpConnection,
  startHttp,
  type TempWorkspace,
  tempWorkspace,
} from "@crow/testkit";

describe("crow-mcp binary", () => {
  test("--version prints the package version and --help the usage, on stdout", () => {
    const version = spawnSync(process.execPath, [CROW_MCP_BIN, "--version"], { encoding: "utf8" });
    assert.equal(version.status, 0);
    assert.match(version.stdout, /^\d+\.\d+\.\d+\n$/);
    const help = spawnSync(process.execPath, [CROW_MCP_BIN, "--help"], { encoding: "utf8" });
    assert.equal(help.status, 0);
    assert.match(help.stdout, /--http/);
    assert.match(help.stdout, /--token/);
  });

  test("an unknown flag is refused with a clear message on stderr and exit code 2", () => {
    const run = spawnSync(process.execPath, [CROW_MCP_BIN, "--htp"], { encoding: "utf8" });
    assert.equal(run.status, 2);
    assert.equal(run.stdout, "");
    assert.match(run.stderr, /crow-mcp: unknown option --htp\n/);
  });

  test("--port without --http is refused", () => {
    const run = spawnSync(process.execPath, [CROW_MCP_BIN, "--port", "9"], { encoding: "utf8" });
    assert.equal(run.status, 2);
    assert.match(run.stderr, /--port only applies with --http/);
  });
});

describe("crow-mcp over stdio", () => {
  let ws: TempWorkspace;
  let mcp: McpConnection;
  before(async () => {
    ws = await tempWorkspace();
    mcp = await connectStdio({ cwd: ws.dir });
  });
  after(async () => {
    await mcp.close();
    await ws.cleanup();
  });

  test("lists the tools with schemas, descriptions and annotations", async () => {
    const { tools } = await mcp.client.listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    for (const name of ["read", "write", "edit"]) {
      const tool = byName.get(name);
      assert.ok(tool, `${name} is listed`);
      // Lean descriptions (issue 49): a sentence or two, the details in the errors that meet them.
      assert.ok((tool.description ?? "").length > 30, `${name} has a real description`);
      assert.equal(tool.inputSchema.type, "object");
      assert.ok(tool.annotations, `${name} has annotations`);
    }
    assert.deepEqual(byName.get("read")?.inputSchema.required, ["file_path"]);
    assert.equal(byName.get("read")?.annotations?.readOnlyHint, true);
    assert.equal(byName.get("write")?.annotations?.destructiveHint, true);
  });

  test("write then read round-trips a file", async () => {
    const file = ws.path("a/b/hello.txt");
    const written = await callTool(mcp.client, "write", { file_path: file, content: "one\ntwo\n" });
    assert.equal(written.isError, undefined);
    assert.equal(written.text, `Successfully wrote 2 lines to ${file}`);
    const read = await callTool(mcp.client, "read", { file_path: file });
    assert.equal(read.text, "one\ntwo");
  });

  test("a missing argument is an isError result naming it, and the server keeps serving", async () => {
    const bad = await callTool(mcp.client, "read", {});
    assert.equal(bad.isError, true);
    assert.match(bad.text, /file_path/);
    const good = await callTool(mcp.client, "write", { file_path: ws.path("x.txt"), content: "x" });
    assert.equal(good.isError, undefined);
  });
});

describe("crow-mcp over Streamable HTTP", () => {
  let ws: TempWorkspace;
  before(async () => {
    ws = await tempWorkspace();
  });
  after(() => ws.cleanup());

  test("serves the tools to an MCP client", async () => {
    const server = await startHttp({ cwd: ws.dir });
    try {
      const mcp = await server.connect();
      const file = ws.path("http.txt");
      await callTool(mcp.client, "write", { file_path: file, content: "over http" });
      assert.equal((await callTool(mcp.client, "read", { file_path: file })).text, "over http");
      await mcp.close();
    } finally {
      await server.stop();
    }
  });

  test("with --token, a client without the token is refused and one with it is served", async () => {
    const server = await startHttp({ cwd: ws.dir, args: ["--token", "s3cret"] });
    try {
      await assert.rejects(server.connect({ token: null }), /401|Unauthorized/);
      await assert.rejects(server.connect({ token: "wrong" }), /401|Unauthorized/);
      const mcp = await server.connect({ token: "s3cret" });
      const { tools } = await mcp.client.listTools();
      assert.ok(tools.some((t) => t.name === "read"));
      await mcp.close();
    } finally {
      await server.stop();
    }
  });

  test("DNS-rebinding protection refuses a foreign Host header", async () => {
    const server = await startHttp({ cwd: ws.dir });
    try {
      // fetch() may not set Host, so speak HTTP directly.
      const status = await new Promise<number | undefined>((resolve, reject) => {
        const request = http.request(server.url, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
            host: "evil.example",
          },
        });
        request.on("response", (response) => {
          response.resume();
          resolve(response.statusCode);
        });
        request.on("error", reject);
        request.end(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: {} }));
      });
      assert.equal(status, 403);
    } finally {
      await server.stop();
    }
  });

  test("without --token a token is generated and printed, and a client without it cannot run commands", async () => {
    const server = await startHttp({ cwd: ws.dir });
    try {
      assert.match(server.stderr(), /token \(send "Authorization: Bearer <token>"\): \S{20,}/);
      assert.ok(server.token);
      await assert.rejects(server.connect({ token: null }), /401|Unauthorized/);
      const answer = await rawPost(server.url, initializeBody(), {});
      assert.equal(answer.status, 401);
      const mcp = await server.connect();
      const result = await callTool(mcp.client, "terminal", { command: "echo served" });
      assert.match(result.text, /served/);
      await mcp.close();
    } finally {
      await server.stop();
    }
  });

  test("--no-auth serves without a token and warns that anyone on the machine can run commands", async () => {
    const server = await startHttp({ cwd: ws.dir, args: ["--no-auth"] });
    try {
      assert.equal(server.token, undefined);
      assert.match(server.stderr(), /--no-auth: serving without a token, so any user of this machine/);
      const mcp = await server.connect();
      assert.match((await callTool(mcp.client, "terminal", { command: "echo open" })).text, /open/);
      await mcp.close();
    } finally {
      await server.stop();
    }
  });

  test("--no-auth together with --token is refused", () => {
    const run = spawnSync(process.execPath, [CROW_MCP_BIN, "--http", "--no-auth", "--token", "x"], {
      encoding: "utf8",
    });
    assert.equal(run.status, 2);
    assert.match(run.stderr, /--no-auth and a token .* exclude each other/);
  });

  test("bound to 0.0.0.0 without --allowed-host, a foreign Host header is still refused", async () => {
    const server = await startHttp({ cwd: ws.dir, args: ["--host", "0.0.0.0", "--token", "s3cret"] });
    try {
      const port = new URL(server.url).port;
      const local = `http://127.0.0.1:${port}/mcp`;
      const auth = { authorization: `Bearer ${server.token}` };
      const foreign = await rawPost(local, initializeBody(), { ...auth, host: "evil.example" });
      assert.equal(foreign.status, 403);
      assert.match(foreign.body, /"jsonrpc":"2.0".*Host evil\.example/);
      const own = await rawPost(local, initializeBody(), { ...auth, host: `127.0.0.1:${port}` });
      assert.equal(own.status, 200, own.body);
    } finally {
      await server.stop();
    }
  });

  test("a malformed body is answered with JSON-RPC errors: 401 without the token, a parse error with it", async () => {
    const server = await startHttp({ cwd: ws.dir, args: ["--token", "s3cret"] });
    try {
      const anonymous = await rawPost(server.url, "{not json", {});
      assert.equal(anonymous.status, 401);
      assert.equal(anonymous.contentType, "application/json");
      assert.doesNotMatch(anonymous.body, /<pre>|at |node_modules/);
      const authorized = await rawPost(server.url, "{not json", { authorization: "Bearer s3cret" });
      assert.equal(authorized.status, 400);
      assert.equal(authorized.contentType, "application/json");
      assert.deepEqual(JSON.parse(authorized.body).error.code, -32700);
      assert.doesNotMatch(authorized.body, /<pre>|at |node_modules/);
      const elsewhere = await rawPost(server.url.replace(/\/mcp$/, "/elsewhere"), "{}", {
        authorization: "Bearer s3cret",
      });
      assert.equal(elsewhere.status, 404);
      assert.equal(elsewhere.contentType, "application/json");
      assert.match(elsewhere.body, /Not found: POST \/elsewhere; crow-mcp serves MCP at \/mcp/);
    } finally {
      await server.stop();
    }
  });
});

function initializeBody(): string {
  return JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "0" } },
  });
}

/** POSTs `body` to `url` with raw node:http (so the Host header can be set), collecting the whole answer. */
async function rawPost(
  url: string,
  body: string,
  headers: Record<string, string>,
): Promise<{ status: number | undefined; contentType: string | undefined; body: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request(url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
    });
    request.on("response", (response) => {
      let text = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => {
        text += chunk;
      });
      response.on("end", () =>
        resolve({
          status: response.statusCode,
          contentType: response.headers["content-type"]?.split(";")[0],
          body: text,
        }),
      );
    });
    request.on("error", reject);
    request.end(body);
  });
}
