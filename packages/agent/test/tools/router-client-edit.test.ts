import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { after, before, describe, test } from "node:test";
import { type TempWorkspace, tempWorkspace } from "@crow/testkit";
import { type ClientBridge, createToolRouter, type ToolRouter } from "../../src/tools/index.js";
import { type EditorLog, fakeEditor, run, toolCallData } from "./helpers.js";

describe("tool router: edit through the editor's buffers (client bridge)", () => {
  let ws: TempWorkspace;
  let router: ToolRouter;
  /** The same tools without an editor: crow-mcp edits the disk. */
  let plain: ToolRouter;
  let log: EditorLog;
  const buffers = new Map<string, string>();
  before(async () => {
    ws = await tempWorkspace();
    const editor = fakeEditor(buffers);
    log = editor.log;
    // A slow editor: a read takes the buffer's text now and answers it on a later macrotask, so parallel edits
    // overlap as they do over ACP (each would read the text before the others' writes without the per-file queue).
    const client: ClientBridge = {
      readTextFile: async (file) => {
        const text = await editor.bridge.readTextFile(file);
        await new Promise((resolve) => setTimeout(resolve, 5));
        return text;
      },
      writeTextFile: editor.bridge.writeTextFile,
    };
    router = await createToolRouter({ cwd: ws.dir, client });
    plain = await createToolRouter({ cwd: ws.dir });
  });
  after(async () => {
    await router.close();
    await plain.close();
    await ws.cleanup();
  });

  /** Runs the same edit on the buffer (through the editor) and on a disk file holding the buffer's text. */
  async function both(name: string, text: string, args: Record<string, unknown>) {
    const file = await ws.write(name, "on disk, not in the buffer\n");
    buffers.set(file, text);
    const twin = await ws.write(`twin-${name}`, text);
    const viaClient = await run(router, "edit", { file_path: file, ...args });
    const viaMcp = await run(plain, "edit", { file_path: twin, ...args });
    return { file, twin, viaClient, viaMcp, mcpText: viaMcp.text.replaceAll(twin, file) };
  }

  test("the edit applies to the unsaved buffer, goes back through the editor, and leaves the disk alone", async () => {
    const { file, viaClient, mcpText } = await both("a.ts", "const a = 1;\nconst b = 2; // unsaved\n", {
      old_string: "const b = 2;",
      new_string: "const b = 3;",
    });
    assert.equal(viaClient.isError, undefined, viaClient.text);
    assert.equal(viaClient.text, mcpText, "the same text as crow-mcp's edit");
    assert.match(viaClient.text, /^Successfully edited .*a\.ts\nReplaced 1 occurrence \(exact match\)\./);
    assert.deepEqual(log.writes.at(-1), { path: file, content: "const a = 1;\nconst b = 3; // unsaved\n" });
    assert.equal(await readFile(file, "utf8"), "on disk, not in the buffer\n");
    const data = toolCallData(viaClient.display);
    assert.equal(data?.via, "client");
    assert.deepEqual(data?.content, [
      {
        type: "diff",
        path: file,
        oldText: "const a = 1;\nconst b = 2; // unsaved\n",
        newText: "const a = 1;\nconst b = 3; // unsaved\n",
      },
    ]);
    assert.deepEqual(data?.locations, [{ path: file, line: 2 }]);
  });

  test("fuzzy matches, re-indentation, CRLF and a byte-order mark work as in crow-mcp", async () => {
    const text = "\uFEFFclass A:\r\n    def f(self):  \r\n        return 1\r\n";
    const { file, twin, viaClient, mcpText } = await both("fuzzy.py", text, {
      old_string: "def f(self):\n    return 1\n",
      new_string: "def g(self):\n    return 2\n",
    });
    assert.equal(viaClient.isError, undefined, viaClient.text);
    assert.match(viaClient.text, /the line-trimmed matcher found/);
    assert.equal(viaClient.text, mcpText);
    const written = buffers.get(file);
    assert.equal(written, "\uFEFFclass A:\r\n    def g(self):\r\n        return 2\r\n");
    assert.equal(written, await readFile(twin, "utf8"), "the buffer got the bytes crow-mcp wrote to disk");
  });

  test("no match gives crow-mcp's closest-lines error; ambiguous and no-op edits its refusals", async () => {
    const text = "function total(items) {\n  let sum = 0;\n  return sum;\n}\n";
    const missing = await both("miss.js", text, { old_string: "let summ = 1;", new_string: "let sum = 2;" });
    assert.equal(missing.viaClient.isError, true);
    assert.match(missing.viaClient.text, /^Error: old_string not found in file\n/);
    assert.match(missing.viaClient.text, /let sum = 0;/, "names the closest lines");
    assert.equal(missing.viaClient.text, missing.mcpText);
    assert.equal(buffers.get(missing.file), text, "the buffer is unchanged");

    const twice = await both("twice.js", "x = 1;\nx = 1;\n", { old_string: "x = 1;", new_string: "x = 2;" });
    assert.match(twice.viaClient.text, /^Error: old_string found 2 times/);
    assert.equal(twice.viaClient.text, twice.mcpText);

    const full = await both("full.js", "content\n", { old_string: "", new_string: "new" });
    assert.match(full.viaClient.text, /already exists and is not empty/);
    assert.equal(full.viaClient.text, full.mcpText);
  });

  test("parallel edits of one buffer all land", async () => {
    const file = await ws.write("parallel.txt", "disk\n");
    buffers.set(file, "one\ntwo\nthree\nfour\n");
    const results = await Promise.all(
      ["one", "two", "three", "four"].map((word) =>
        run(router, "edit", { file_path: file, old_string: word, new_string: word.toUpperCase() }),
      ),
    );
    for (const result of results) assert.equal(result.isError, undefined, result.text);
    assert.equal(buffers.get(file), "ONE\nTWO\nTHREE\nFOUR\n");
    assert.equal(await readFile(file, "utf8"), "disk\n");
  });

  test("files the editor cannot read go to crow-mcp, which gives its errors or creates the file", async () => {
    const missing = await run(router, "edit", { file_path: ws.path("nope.txt"), old_string: "a", new_string: "b" });
    assert.equal(missing.isError, true);
    assert.match(missing.text, /^Error: File does not exist: .*nope\.txt/);
    assert.equal(toolCallData(missing.display)?.via, "crow-mcp");

    const created = await run(router, "edit", { file_path: ws.path("new.txt"), old_string: "", new_string: "hi\n" });
    assert.equal(created.isError, undefined, created.text);
    assert.equal(await readFile(ws.path("new.txt"), "utf8"), "hi\n");

    const relative = await run(router, "edit", { file_path: "rel.txt", old_string: "a", new_string: "b" });
    assert.match(relative.text, /must be an absolute path/);
  });

  test("an editor that refuses the write gives an error result", async () => {
    const refusing = await createToolRouter({
      cwd: ws.dir,
      client: {
        readTextFile: async () => "abc\n",
        writeTextFile: async () => {
          throw new Error("buffer is read-only");
        },
      },
    });
    try {
      const result = await run(refusing, "edit", { file_path: ws.path("ro.txt"), old_string: "b", new_string: "x" });
      assert.equal(result.isError, true);
      assert.equal(result.text, "Error: Failed to write file: buffer is read-only");
    } finally {
      await refusing.close();
    }
  });
});
