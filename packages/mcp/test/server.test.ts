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
    assert.match(run.stderr, /Unknown option '--htp'/);
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
      assert.ok((tool.description ?? "").length > 80, `${name} has a real description`);
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
    assert.equal(read.text, "1→one\n2→two");
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
      assert.equal((await callTool(mcp.client, "read", { file_path: file })).text, "1→over http");
      await mcp.close();
    } finally {
      await server.stop();
    }
  });

  test("with --token, a client without the token is refused and one with it is served", async () => {
    const server = await startHttp({ cwd: ws.dir, args: ["--token", "s3cret"] });
    try {
      await assert.rejects(server.connect(), /401|Unauthorized/);
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
});
