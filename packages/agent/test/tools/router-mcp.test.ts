import assert from "node:assert/strict";
import { realpathSync } from "node:fs";
import { access } from "node:fs/promises";
import { after, before, describe, test } from "node:test";
import { runToolCall } from "@crow/core";
import { CROW_MCP_BIN, type TempWorkspace, tempWorkspace } from "@crow/testkit";
import { builtinServerPath, createToolRouter, type ToolRouter } from "../../src/tools/index.js";
import { alive, run, toolCallData, until } from "./helpers.js";

const PNG_1X1 = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=",
  "base64",
);

describe("tool router over the built-in crow-mcp (stdio)", () => {
  let ws: TempWorkspace;
  let router: ToolRouter;
  before(async () => {
    ws = await tempWorkspace();
    router = await createToolRouter({ cwd: ws.dir, configServers: { broken: { command: "crow-no-such-command" } } });
  });
  after(async () => {
    await router.close();
    await ws.cleanup();
  });

  test("the built-in is this installation's crow-mcp", () => {
    assert.equal(realpathSync(builtinServerPath()), realpathSync(CROW_MCP_BIN));
  });

  test("offers crow-mcp's tools as OpenAI function definitions, unprefixed", () => {
    const defs = router.definitions();
    const names = defs.map((d) => d.function.name);
    for (const name of ["read", "write", "edit", "terminal", "web_search", "web_fetch"])
      assert.ok(names.includes(name));
    const read = defs.find((d) => d.function.name === "read");
    assert.equal(read?.type, "function");
    assert.match(read?.function.description ?? "", /Read a text file/);
    assert.equal((read?.function.parameters as { type?: string } | undefined)?.type, "object");
    assert.ok(!("$schema" in (read?.function.parameters ?? {})));
  });

  test("passes on the servers' readOnlyHint for the permission modes", () => {
    assert.equal(router.resolve("read")?.readOnly, true);
    assert.equal(router.resolve("web_fetch")?.readOnly, true);
    assert.equal(router.resolve("write")?.readOnly, false);
    assert.equal(router.resolve("terminal")?.readOnly, false);
    assert.equal(router.resolve("no_such_tool")?.readOnly, undefined);
  });

  test("a server that cannot start is reported by name and reason while the built-in works", async () => {
    assert.deepEqual(router.failures(), [
      'MCP server "broken" failed to start: command not found: crow-no-such-command',
    ]);
    const status = router.servers();
    assert.equal(status.find((s) => s.name === "broken")?.state, "failed");
    assert.equal(status.find((s) => s.name === "crow-mcp")?.state, "connected");
    assert.equal(status.find((s) => s.name === "crow-mcp")?.transport, "socket");
    await ws.write("hello.txt", "hello\nworld\n");
    const result = await run(router, "read", { file_path: ws.path("hello.txt") });
    assert.equal(result.isError, undefined);
    assert.equal(result.text, "hello\nworld");
  });

  test("tolerant names reach the same tool (crow-mcp_read, CROW-MCP__READ)", async () => {
    await ws.write("t.txt", "x\n");
    for (const name of ["crow-mcp_read", "mcp__crow-mcp__read", "READ"]) {
      const result = await run(router, name, { file_path: ws.path("t.txt") });
      assert.equal(result.text, "x", name);
    }
    // Even when the caller did not resolve the name itself.
    const direct = await runToolCall(
      router,
      { id: "x", name: "crow-mcp_read", tool: "crow-mcp_read", args: { file_path: ws.path("t.txt") } },
      { signal: new AbortController().signal, onProgress: () => {} },
    );
    assert.equal(direct.content, "x");
  });

  test("an unknown tool is an error result naming the available tools", async () => {
    const result = await run(router, "frobnicate", {});
    assert.equal(result.isError, true);
    assert.match(result.text, /unknown tool "frobnicate".*read, write, edit, terminal/);
  });

  test("tool errors stay results with isError", async () => {
    const result = await run(router, "read", { file_path: ws.path("missing.txt") });
    assert.equal(result.isError, true);
    assert.match(result.text, /File does not exist/);
    const relative = await run(router, "write", { file_path: "rel.txt", content: "x" });
    assert.equal(relative.isError, true);
    assert.match(relative.text, /must be an absolute path/);
  });

  test("images come back as image parts", async () => {
    await ws.write("dot.png", PNG_1X1);
    const result = await run(router, "read", { file_path: ws.path("dot.png") });
    assert.ok(Array.isArray(result.content));
    const image = result.content.find((p) => p.type === "image_url");
    assert.ok(image && image.type === "image_url");
    assert.ok(image.image_url.url.startsWith("data:image/png;base64,"));
  });

  test("write of a new file carries a diff without old text and the file's location", async () => {
    const file = ws.path("new/dir/file.ts");
    const result = await run(router, "write", { file_path: file, content: "export const a = 1;\n" });
    assert.equal(result.isError, undefined);
    assert.equal(await ws.read("new/dir/file.ts"), "export const a = 1;\n");
    const data = toolCallData(result.display);
    assert.deepEqual(data?.content, [{ type: "diff", path: file, oldText: null, newText: "export const a = 1;\n" }]);
    assert.deepEqual(data?.locations, [{ path: file, line: 1 }]);
  });

  test("edit carries the whole file before and after, located at the changed line", async () => {
    const file = await ws.write("e.py", "def f():\n    return 1\n\nprint(f())\n");
    const result = await run(router, "edit", { file_path: file, old_string: "return 1", new_string: "return 2" });
    assert.equal(result.isError, undefined, result.text);
    const data = toolCallData(result.display);
    assert.deepEqual(data?.content, [
      {
        type: "diff",
        path: file,
        oldText: "def f():\n    return 1\n\nprint(f())\n",
        newText: "def f():\n    return 2\n\nprint(f())\n",
      },
    ]);
    assert.deepEqual(data?.locations, [{ path: file, line: 2 }]);
  });

  test("a failed edit has no diff", async () => {
    const file = await ws.write("f.txt", "abc\n");
    const result = await run(router, "edit", { file_path: file, old_string: "zzz", new_string: "y" });
    assert.equal(result.isError, true);
    assert.equal(toolCallData(result.display)?.content, undefined);
  });

  test("terminal output is relayed as progress while the command runs", async () => {
    const result = await run(router, "terminal", { command: "for i in 1 2 3; do echo tick$i; sleep 0.4; done" });
    assert.equal(result.text, "tick1\ntick2\ntick3");
    const relayed = result.progress.map((p) => p.message ?? "").join("");
    assert.match(relayed, /tick1/);
  });

  test("aborting a call cancels the running terminal command", async () => {
    const marker = ws.path("marker");
    const controller = new AbortController();
    const result = await run(
      router,
      "terminal",
      { command: `echo started; sleep 2; touch ${marker}` },
      { signal: controller.signal, onProgress: (p) => p.message?.includes("started") && controller.abort() },
    );
    assert.equal(result.isError, true);
    assert.match(result.text, /cancelled/i);
    // The shell is free again (crow-mcp refuses a new command while one runs) and the old one never finished.
    const next = await run(router, "terminal", { command: "echo next" });
    assert.match(next.text, /next$/);
    assert.doesNotMatch(next.text, /Command failed/);
    await new Promise((r) => setTimeout(r, 2500));
    await assert.rejects(access(marker));
  });
});

describe("tool router: server lifecycle", () => {
  test("a server that dies mid-call gives an error naming it, and the next call restarts it", async () => {
    const ws = await tempWorkspace();
    const router = await createToolRouter({ cwd: ws.dir });
    try {
      const pid = router.servers()[0]?.pid;
      assert.ok(pid);
      const running = run(
        router,
        "terminal",
        { command: "echo going; sleep 20" },
        {
          onProgress: (p) => {
            if (p.message?.includes("going")) process.kill(pid, "SIGKILL");
          },
        },
      );
      const result = await running;
      assert.equal(result.isError, true);
      assert.match(result.text, /MCP server "crow-mcp" died during the call/);
      const next = await run(router, "terminal", { command: "echo back" });
      assert.match(next.text, /back/);
      const newPid = router.servers()[0]?.pid;
      assert.ok(newPid && newPid !== pid);
    } finally {
      await router.close();
      await ws.cleanup();
    }
  });

  test("close() stops the spawned servers and the session's shell, and leaves no tools", async () => {
    const ws = await tempWorkspace();
    const router = await createToolRouter({
      cwd: ws.dir,
      configServers: { second: { command: process.execPath, args: [CROW_MCP_BIN] } },
    });
    const shared = router.servers().find((s) => s.name === "crow-mcp")?.pid;
    const pid = router.servers().find((s) => s.name === "second")?.pid;
    assert.ok(pid && alive(pid) && shared);
    const shell = Number(/^(\d+)/m.exec((await run(router, "crow-mcp_terminal", { command: "echo $$" })).text)?.[1]);
    assert.ok(shell > 0 && alive(shell));
    await router.close();
    await until(() => !alive(pid) && !alive(shell));
    // The shared built-in process serves the other sessions of this process: only this session's shell stopped.
    assert.equal(alive(shared), true);
    assert.deepEqual(router.definitions(), []);
    const result = await run(router, "read", { file_path: ws.path("x") });
    assert.equal(result.isError, true);
    await router.close(); // idempotent
    await ws.cleanup();
  });

  test("names offered by two servers are prefixed with the server name; unique ones are not", async () => {
    const ws = await tempWorkspace();
    const router = await createToolRouter({
      cwd: ws.dir,
      configServers: { second: { command: process.execPath, args: [CROW_MCP_BIN] } },
    });
    try {
      const names = router.definitions().map((d) => d.function.name);
      assert.ok(names.includes("crow-mcp_write") && names.includes("second_write"), names.join());
      assert.ok(!names.includes("write"));
      const result = await run(router, "second_write", { file_path: ws.path("s.txt"), content: "from second\n" });
      assert.equal(toolCallData(result.display)?.via, "second");
      assert.equal(await ws.read("s.txt"), "from second\n");
      // A bare "write" is ambiguous now: refused rather than guessed.
      const ambiguous = await run(router, "write", { file_path: ws.path("s.txt"), content: "?" });
      assert.equal(ambiguous.isError, true);
    } finally {
      await router.close();
      await ws.cleanup();
    }
  });

  test("builtin: false and no servers gives an empty tool list", async () => {
    const ws = await tempWorkspace();
    const router = await createToolRouter({ cwd: ws.dir, builtin: false });
    assert.deepEqual(router.definitions(), []);
    assert.deepEqual(router.failures(), []);
    await router.close();
    await ws.cleanup();
  });

  test("a stdio server that exits at startup is reported with its stderr", async () => {
    const ws = await tempWorkspace();
    const router = await createToolRouter({
      cwd: ws.dir,
      builtin: false,
      mcpServers: [
        {
          name: "crashy",
          command: process.execPath,
          args: ["-e", "console.error('boom: missing API key'); process.exit(3)"],
          env: [],
        },
      ],
    });
    const [failure] = router.failures();
    assert.match(failure ?? "", /MCP server "crashy" failed to start: .*exited/);
    assert.match(failure ?? "", /boom: missing API key/);
    await router.close();
    await ws.cleanup();
  });
});
