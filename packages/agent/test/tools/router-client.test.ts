import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { after, before, describe, test } from "node:test";
import type { ToolProgress } from "@crow/core";
import { type TempWorkspace, tempWorkspace } from "@crow/testkit";
import { createToolRouter, type ToolRouter } from "../../src/tools/index.js";
import { type EditorLog, fakeEditor, run, toolCallData } from "./helpers.js";

describe("tool router with the editor's fs (client bridge)", () => {
  let ws: TempWorkspace;
  let router: ToolRouter;
  let log: EditorLog;
  const buffers = new Map<string, string>();
  before(async () => {
    ws = await tempWorkspace();
    const editor = fakeEditor(buffers);
    log = editor.log;
    const { readTextFile, writeTextFile } = editor.bridge;
    router = await createToolRouter({ cwd: ws.dir, client: { readTextFile, writeTextFile } });
  });
  after(async () => {
    await router.close();
    await ws.cleanup();
  });

  test("read shows the editor's unsaved buffer, formatted like crow-mcp", async () => {
    const file = await ws.write("buf.ts", "on disk\n");
    buffers.set(file, "unsaved 1\nunsaved 2\nunsaved 3\n");
    const result = await run(router, "read", { file_path: file });
    // A whole file as it is; numbered, as crow-mcp numbers them, when the call gives offset or limit.
    assert.equal(result.text, "unsaved 1\nunsaved 2\nunsaved 3");
    assert.equal(
      (await run(router, "read", { file_path: file, offset: 1 })).text,
      "1\tunsaved 1\n2\tunsaved 2\n3\tunsaved 3",
    );
    assert.ok(log.reads.includes(file));
    assert.equal(toolCallData(result.display)?.via, "client");
    assert.deepEqual(toolCallData(result.display)?.locations, [{ path: file }]);
    const page = await run(router, "read", { file_path: file, offset: 2, limit: 1 });
    assert.equal(
      page.text,
      "2\tunsaved 2\n\n[File truncated: showing lines 2-2 of 3 total. Use offset=3 to continue, or offset and limit parameters to read other sections.]",
    );
    assert.deepEqual(toolCallData(page.display)?.locations, [{ path: file, line: 2 }]);
  });

  test("the client read gives exactly crow-mcp's text for the same file", async () => {
    const lines = Array.from({ length: 12 }, (_, i) => `line ${i + 1}\t${"x".repeat(i === 5 ? 2100 : i)}`);
    const file = await ws.write("same.txt", `${lines.join("\r\n")}\r\n`);
    const viaClient = await run(router, "read", { file_path: file, offset: 3, limit: 5 });
    const plain = await createToolRouter({ cwd: ws.dir });
    try {
      const viaMcp = await run(plain, "read", { file_path: file, offset: 3, limit: 5 });
      assert.equal(toolCallData(viaClient.display)?.via, "client");
      assert.equal(viaClient.text, viaMcp.text);
      const empty = await ws.write("empty.txt", "");
      assert.equal(
        (await run(router, "read", { file_path: empty })).text,
        (await run(plain, "read", { file_path: empty })).text,
      );
      const past = { file_path: file, offset: 99 };
      assert.equal((await run(router, "read", past)).text, (await run(plain, "read", past)).text);
    } finally {
      await plain.close();
    }
  });

  test("files the editor cannot read fall back to crow-mcp's precise errors", async () => {
    const result = await run(router, "read", { file_path: ws.path("nope.txt") });
    assert.equal(result.isError, true);
    assert.match(result.text, /File does not exist/);
    const relative = await run(router, "read", { file_path: "rel.txt" });
    assert.match(relative.text, /must be an absolute path/);
  });

  test("write goes through the editor, with a diff from its buffer", async () => {
    const file = await ws.write("w.txt", "disk\n");
    buffers.set(file, "buffer\n");
    const result = await run(router, "write", { file_path: file, content: "new\ncontent\n" });
    assert.equal(result.text, `Successfully wrote 2 lines to ${file}`);
    assert.deepEqual(log.writes.at(-1), { path: file, content: "new\ncontent\n" });
    assert.equal(await readFile(file, "utf8"), "disk\n", "the editor, not the router, writes");
    const data = toolCallData(result.display);
    assert.deepEqual(data?.content, [{ type: "diff", path: file, oldText: "buffer\n", newText: "new\ncontent\n" }]);
  });

  test("writing a new file through the editor has no old text", async () => {
    const file = ws.path("brand-new.txt");
    const result = await run(router, "write", { file_path: file, content: "hi" });
    assert.deepEqual(toolCallData(result.display)?.content, [
      { type: "diff", path: file, oldText: null, newText: "hi" },
    ]);
  });

  test("an editor that refuses a write gives an error result", async () => {
    const refusing = await createToolRouter({
      cwd: ws.dir,
      client: {
        writeTextFile: async () => {
          throw new Error("buffer is read-only");
        },
      },
    });
    try {
      const result = await run(refusing, "write", { file_path: ws.path("ro.txt"), content: "x" });
      assert.equal(result.isError, true);
      assert.equal(result.text, "Error: Failed to write file: buffer is read-only");
    } finally {
      await refusing.close();
    }
  });
});

describe("tool router with the editor's terminal (client bridge)", () => {
  let ws: TempWorkspace;
  let router: ToolRouter;
  let log: EditorLog;
  before(async () => {
    ws = await tempWorkspace();
    const editor = fakeEditor();
    log = editor.log;
    router = await createToolRouter({ cwd: ws.dir, client: { createTerminal: editor.bridge.createTerminal } });
  });
  after(async () => {
    await router.close();
    await ws.cleanup();
  });

  test("runs bash -c in the session cwd, reports the terminal id first, then releases it", async () => {
    const seen: ToolProgress[] = [];
    const result = await run(
      router,
      "terminal",
      { command: "pwd; echo out; echo err >&2" },
      { onProgress: (p) => seen.push(p) },
    );
    const terminal = log.terminals.at(-1);
    assert.ok(terminal);
    assert.equal(terminal.params.command, "bash");
    assert.deepEqual(terminal.params.args, ["-c", "pwd; echo out; echo err >&2"]);
    assert.equal(terminal.params.cwd, ws.dir);
    assert.equal(terminal.released, true);
    assert.deepEqual(toolCallData(seen[0]?.display), {
      via: "client",
      terminalId: terminal.id,
      content: [{ type: "terminal", terminalId: terminal.id }],
    });
    // A success is its output alone, as crow-mcp's: no cwd line (it is always the session's), no status line.
    assert.equal(result.text, `${ws.dir}\nout\nerr`);
    assert.equal(toolCallData(result.display)?.terminalId, terminal.id);
  });

  test("a failing command reports its exit code in crow-mcp's wording", async () => {
    const result = await run(router, "terminal", { command: "echo bad; exit 3" });
    assert.equal(result.isError, undefined);
    assert.equal(result.text, "bad\n[Command failed with exit code 3]");
  });

  test("a command that prints nothing says so, and a silent failure still names its code", async () => {
    assert.equal((await run(router, "terminal", { command: "true" })).text, "(no output)");
    assert.equal((await run(router, "terminal", { command: "false" })).text, "[Command failed with exit code 1]");
  });

  test("the call's timeout kills the command and says so", async () => {
    const result = await run(router, "terminal", { command: "echo begun; sleep 30", timeout: 0.5 });
    assert.match(result.text, /begun/);
    assert.match(result.text, /timed out after 0\.5s and was killed/);
    assert.equal(log.terminals.at(-1)?.killed, true);
    assert.equal(log.terminals.at(-1)?.released, true);
  });

  test("aborting the call kills and releases the terminal", async () => {
    const controller = new AbortController();
    const marker = ws.path("never");
    const result = await run(
      router,
      "terminal",
      { command: `sleep 2; touch ${marker}` },
      { signal: controller.signal, onProgress: (p) => toolCallData(p.display)?.terminalId && controller.abort() },
    );
    assert.equal(result.isError, true);
    assert.match(result.text, /cancelled/);
    assert.equal(log.terminals.at(-1)?.killed, true);
    assert.equal(log.terminals.at(-1)?.released, true);
    await new Promise((r) => setTimeout(r, 2500));
    await assert.rejects(readFile(marker));
  });

  test("input, keys and waiting are refused: there is no persistent shell", async () => {
    for (const args of [{ command: "y", is_input: true }, { command: "C-c" }, { command: "" }]) {
      const before = log.terminals.length;
      const result = await run(router, "terminal", args);
      assert.equal(result.isError, true);
      assert.match(result.text, /fresh shell/);
      assert.equal(log.terminals.length, before, "no terminal is created");
    }
  });

  test("a bare cd is run but the result says it does not carry over", async () => {
    const result = await run(router, "terminal", { command: "cd /tmp" });
    assert.match(result.text, /do not carry over/);
  });

  test("output beyond the cap keeps its beginning and end", async () => {
    const result = await run(router, "terminal", { command: "echo FIRST; seq 1 20000; echo LAST" });
    assert.match(result.text, /^FIRST\n/);
    assert.match(result.text, /\nLAST$/);
    assert.match(result.text, /characters omitted/);
    assert.ok(result.text.length < 31_000);
  });
});
