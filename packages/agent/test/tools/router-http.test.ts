import assert from "node:assert/strict";
import { createServer } from "node:net";
import { after, before, describe, test } from "node:test";
import { type HttpServerProcess, startHttp, type TempWorkspace, tempWorkspace } from "@crow/testkit";
import { createToolRouter, type ToolRouter } from "../../src/tools/index.js";
import { run, toolCallData } from "./helpers.js";

/** A 127.0.0.1 port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** The Authorization header of an ACP `mcpServers` entry carrying the server's token. */
function bearer(server: HttpServerProcess): Array<{ name: string; value: string }> {
  return [{ name: "Authorization", value: `Bearer ${server.token}` }];
}

describe("tool router over Streamable HTTP (crow-mcp --http)", () => {
  let ws: TempWorkspace;
  let http: HttpServerProcess;
  let router: ToolRouter;
  before(async () => {
    ws = await tempWorkspace();
    http = await startHttp({ cwd: ws.dir });
    router = await createToolRouter({
      cwd: ws.dir,
      builtin: false,
      mcpServers: [{ type: "http", name: "remote", url: http.url, headers: bearer(http) }],
    });
  });
  after(async () => {
    await router.close();
    await http.stop();
    await ws.cleanup();
  });

  test("lists the remote server's tools and reports it connected", () => {
    assert.deepEqual(router.failures(), []);
    const [status] = router.servers();
    assert.equal(status?.name, "remote");
    assert.equal(status?.transport, "http");
    assert.equal(status?.state, "connected");
    assert.ok(status?.tools.includes("terminal"));
  });

  test("write, edit and read work, with diff data", async () => {
    const file = ws.path("h.txt");
    const written = await run(router, "write", { file_path: file, content: "one\ntwo\n" });
    assert.equal(written.isError, undefined, written.text);
    const edited = await run(router, "remote_edit", { file_path: file, old_string: "two", new_string: "2" });
    assert.deepEqual(toolCallData(edited.display)?.content, [
      { type: "diff", path: file, oldText: "one\ntwo\n", newText: "one\n2\n" },
    ]);
    assert.equal((await run(router, "read", { file_path: file })).text, "one\n2");
  });

  test("terminal progress is relayed over HTTP", async () => {
    const result = await run(router, "terminal", { command: "for i in 1 2 3; do echo h$i; sleep 0.4; done" });
    assert.match(result.text, /h1\nh2\nh3/);
    assert.match(result.progress.map((p) => p.message ?? "").join(""), /h1/);
  });

  test("headers from the ACP entry reach the server (a wrong bearer token is refused)", async () => {
    const secured = await startHttp({ cwd: ws.dir, env: { CROW_MCP_TOKEN: "s3cret" } });
    try {
      const good = await createToolRouter({
        cwd: ws.dir,
        builtin: false,
        mcpServers: [
          { type: "http", name: "s", url: secured.url, headers: [{ name: "Authorization", value: "Bearer s3cret" }] },
        ],
      });
      const bad = await createToolRouter({
        cwd: ws.dir,
        builtin: false,
        mcpServers: [
          { type: "http", name: "s", url: secured.url, headers: [{ name: "Authorization", value: "Bearer nope" }] },
        ],
      });
      assert.deepEqual(good.failures(), []);
      assert.equal(bad.failures().length, 1);
      assert.match(bad.failures()[0] ?? "", /MCP server "s" failed to start/);
      await good.close();
      await bad.close();
    } finally {
      await secured.stop();
    }
  });
});

describe("tool router: unreachable HTTP and SSE servers", () => {
  test("are reported by name while the built-in still works", async () => {
    const ws = await tempWorkspace();
    const port = await closedPort();
    const router = await createToolRouter({
      cwd: ws.dir,
      mcpServers: [
        { type: "http", name: "gone-http", url: `http://127.0.0.1:${port}/mcp`, headers: [] },
        { type: "sse", name: "gone-sse", url: `http://127.0.0.1:${port}/sse`, headers: [] },
      ],
      configServers: { "bad-entry": { transport: "websocket", url: "ws://x" } },
    });
    try {
      const failures = router.failures().join("\n");
      assert.match(failures, /MCP server "gone-http" failed to start: .*(ECONNREFUSED|fetch failed)/);
      assert.match(failures, /MCP server "gone-sse" failed to start: /);
      assert.match(
        failures,
        /MCP server "bad-entry" failed to start: mcpServers.bad-entry: unknown transport "websocket"/,
      );
      const result = await run(router, "write", { file_path: ws.path("ok.txt"), content: "ok" });
      assert.equal(result.isError, undefined);
    } finally {
      await router.close();
      await ws.cleanup();
    }
  });

  test("an HTTP server that goes away mid-session gives an error naming it", async () => {
    const ws = await tempWorkspace();
    const http = await startHttp({ cwd: ws.dir });
    const router = await createToolRouter({
      cwd: ws.dir,
      builtin: false,
      mcpServers: [{ type: "http", name: "flaky", url: http.url, headers: bearer(http) }],
    });
    try {
      await http.stop();
      const result = await run(router, "read", { file_path: ws.path("x") });
      assert.equal(result.isError, true);
      assert.match(result.text, /MCP server "flaky"/);
      // The next call tries to reconnect once and says the server is down.
      const again = await run(router, "read", { file_path: ws.path("x") });
      assert.match(again.text, /MCP server "flaky" is down and could not be restarted/);
    } finally {
      await router.close();
      await ws.cleanup();
    }
  });
});
