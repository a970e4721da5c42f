import assert from "node:assert/strict";
import { chmod, lstat, mkdir, readFile, readlink, stat, symlink, writeFile } from "node:fs/promises";
import { after, before, describe, test } from "node:test";
import {
  callTool,
  connectStdio,
  type McpConnection,
  startHttp,
  type TempWorkspace,
  tempWorkspace,
} from "@crow/testkit";
import { CASCADE_CASES } from "./edit-cases.js";

describe("edit over stdio", () => {
  let ws: TempWorkspace;
  let mcp: McpConnection;
  const edit = (args: Record<string, unknown>) => callTool(mcp.client, "edit", args);
  before(async () => {
    ws = await tempWorkspace();
    mcp = await connectStdio({ cwd: ws.dir });
  });
  after(async () => {
    await mcp.close();
    await ws.cleanup();
  });

  test("is listed with its parameters, replace_all optional, and as destructive", async () => {
    const { tools } = await mcp.client.listTools();
    const tool = tools.find((t) => t.name === "edit");
    assert.ok(tool);
    assert.deepEqual(tool.inputSchema.required, ["file_path", "old_string", "new_string"]);
    assert.ok(tool.inputSchema.properties && "replace_all" in tool.inputSchema.properties);
    assert.equal(tool.annotations?.destructiveHint, true);
    assert.equal(tool.annotations?.readOnlyHint, false);
  });

  test("an exact edit reports itself and shows a unified diff", async () => {
    const file = await ws.write("exact.py", "def f():\n    return 1\n\nprint(f())\n");
    const result = await edit({ file_path: file, old_string: "return 1", new_string: "return 2" });
    assert.equal(result.isError, undefined);
    assert.equal(
      result.text,
      `Successfully edited ${file}\nReplaced 1 occurrence (exact match).\n\n@@ -1,4 +1,4 @@\n def f():\n-    return 1\n+    return 2\n \n print(f())`,
    );
    assert.equal(await readFile(file, "utf8"), "def f():\n    return 2\n\nprint(f())\n");
  });

  for (const c of CASCADE_CASES) {
    test(`the ${c.matcher} matcher is reachable through the tool`, async () => {
      const file = await ws.write(`cascade-${c.matcher}.txt`, c.content);
      const result = await edit({ file_path: file, old_string: c.old, new_string: c.new });
      assert.equal(result.isError, undefined, result.text);
      assert.equal(result.text.split("\n")[0], `Successfully edited ${file}`);
      if (c.matcher === "exact") assert.match(result.text, /\(exact match\)/);
      else assert.match(result.text, new RegExp(`the ${c.matcher} matcher found`));
      assert.match(result.text, /^@@ /m);
      assert.equal(await readFile(file, "utf8"), c.expected);
    });
  }

  test("a re-indented new_string is announced", async () => {
    const file = await ws.write("indent.py", "class A:\n    def f(self):\n        return 1\n");
    const result = await edit({
      file_path: file,
      old_string: "def f(self):\n    return 1",
      new_string: "def g(self):\n    return 2",
    });
    assert.match(result.text, /new_string was re-indented \(\+4 spaces\)/);
    assert.equal(await readFile(file, "utf8"), "class A:\n    def g(self):\n        return 2\n");
  });

  test("an ambiguous old_string is an error naming the count and lines, and the file is unchanged", async () => {
    const file = await ws.write("twice.js", "log(1);\nrun();\nlog(1);\n");
    const result = await edit({ file_path: file, old_string: "log(1);", new_string: "log(2);" });
    assert.equal(result.isError, true);
    assert.match(
      result.text,
      /^Error: old_string found 2 times\. Provide more context to identify the correct match\.\nThe matches start on lines 1, 3\./,
    );
    assert.equal(await readFile(file, "utf8"), "log(1);\nrun();\nlog(1);\n");
  });

  test("replace_all replaces every occurrence with upstream's success line", async () => {
    const file = await ws.write("all.txt", "foo bar foo baz foo");
    const result = await edit({ file_path: file, old_string: "foo", new_string: "qux", replace_all: true });
    assert.equal(result.isError, undefined);
    assert.match(result.text, new RegExp(`^Successfully made replacements in ${file}\nReplaced 3 occurrences`));
    assert.equal(await readFile(file, "utf8"), "qux bar qux baz qux");
  });

  test("not found shows the closest lines with their line numbers", async () => {
    const file = await ws.write("close.py", "import os\n\ndef main():\n    print('hello world')\n    return 0\n");
    const result = await edit({
      file_path: file,
      old_string: "def main():\n    print('hello, world')",
      new_string: "def main():\n    pass",
    });
    assert.equal(result.isError, true);
    assert.match(result.text, /^Error: old_string not found in file\nDid you mean lines 3-4/);
    assert.match(result.text, /\n3\tdef main\(\):\n4\t {4}print\('hello world'\)\n/);
  });

  test("an empty old_string creates a new file with its directories, but not over a non-empty file", async () => {
    const file = ws.path("new/deep/dir/created.ts");
    const created = await edit({ file_path: file, old_string: "", new_string: "export const x = 1;\n" });
    assert.equal(created.isError, undefined);
    assert.equal(created.text, `Successfully edited ${file}\nCreated a new file with 1 lines.`);
    assert.equal(await readFile(file, "utf8"), "export const x = 1;\n");

    const again = await edit({ file_path: file, old_string: "", new_string: "overwrite" });
    assert.equal(again.isError, true);
    assert.match(again.text, /old_string is empty, which creates a new file, but .* already exists and is not empty/);
    assert.equal(await readFile(file, "utf8"), "export const x = 1;\n");

    const empty = await ws.write("empty.txt", "");
    const filled = await edit({ file_path: empty, old_string: "", new_string: "now\nfull\n" });
    assert.equal(filled.isError, undefined);
    assert.match(filled.text, /Filled the empty file with 2 lines/);
    assert.equal(await readFile(empty, "utf8"), "now\nfull\n");
  });

  test("CRLF line endings and a UTF-8 BOM survive an edit", async () => {
    const file = await ws.write("win.txt", Buffer.from("\uFEFFone\r\ntwo\r\nthree\r\n", "utf8"));
    const result = await edit({ file_path: file, old_string: "one\ntwo\n", new_string: "1\n2\n2.5\n" });
    assert.equal(result.isError, undefined, result.text);
    const bytes = await readFile(file);
    assert.deepEqual([...bytes.subarray(0, 3)], [0xef, 0xbb, 0xbf]);
    assert.equal(bytes.toString("utf8"), "\uFEFF1\r\n2\r\n2.5\r\nthree\r\n");
  });

  test("the file keeps its mode", async () => {
    const file = await ws.write("script.sh", "#!/bin/sh\necho hi\n");
    await chmod(file, 0o751);
    await edit({ file_path: file, old_string: "echo hi", new_string: "echo bye" });
    assert.equal((await stat(file)).mode & 0o777, 0o751);
    assert.equal(await readFile(file, "utf8"), "#!/bin/sh\necho bye\n");
  });

  test("parallel edits of one file both land", async () => {
    const file = await ws.write("parallel.txt", "alpha\nbeta\ngamma\n");
    const [a, b] = await Promise.all([
      edit({ file_path: file, old_string: "alpha", new_string: "ALPHA" }),
      edit({ file_path: file, old_string: "gamma", new_string: "GAMMA" }),
    ]);
    assert.equal(a?.isError, undefined);
    assert.equal(b?.isError, undefined);
    assert.equal(await readFile(file, "utf8"), "ALPHA\nbeta\nGAMMA\n");
  });

  test("bad input is an isError result with a clear message, and the server keeps serving", async () => {
    const file = await ws.write("target.txt", "keep me\n");
    const cases: Array<{ args: Record<string, unknown>; message: RegExp }> = [
      { args: { file_path: file, old_string: "keep" }, message: /new_string/ },
      { args: { old_string: "a", new_string: "b" }, message: /file_path/ },
      { args: { file_path: file, old_string: "keep", new_string: "k", extra: 1 }, message: /extra|Unrecognized/i },
      { args: { file_path: file, old_string: "keep", new_string: "k", replace_all: "yes" }, message: /replace_all/ },
      { args: { file_path: file, old_string: 42, new_string: "k" }, message: /old_string/ },
      { args: { file_path: "target.txt", old_string: "keep", new_string: "k" }, message: /must be an absolute path/ },
      {
        args: { file_path: file, old_string: "keep", new_string: "keep" },
        message: /^Error: old_string and new_string must be different$/,
      },
      {
        args: { file_path: ws.dir, old_string: "a", new_string: "b" },
        message: new RegExp(`^Error: Path is a directory: ${ws.dir}$`),
      },
      {
        args: { file_path: ws.path("missing.txt"), old_string: "a", new_string: "b" },
        message: new RegExp(`^Error: File does not exist: ${ws.path("missing.txt")}\nTo create it`),
      },
    ];
    for (const { args, message } of cases) {
      const result = await edit(args);
      assert.equal(result.isError, true, `${JSON.stringify(args)} should fail`);
      assert.match(result.text, message);
    }
    assert.equal(await readFile(file, "utf8"), "keep me\n");

    const latin1 = await ws.write("latin1.txt", Buffer.from("caf\xe9 cr\xe8me\n", "latin1"));
    const notUtf8 = await edit({ file_path: latin1, old_string: "caf", new_string: "tea" });
    assert.equal(notUtf8.isError, true);
    assert.match(notUtf8.text, /^Error: File is not valid UTF-8 text: .* \(first invalid byte on line 1\)/);

    const binary = await ws.write("blob.bin", Buffer.from([0x41, 0, 1, 2, 0x42]));
    assert.match((await edit({ file_path: binary, old_string: "A", new_string: "B" })).text, /Cannot edit binary file/);

    const link = ws.path("dangling.txt");
    await symlink(ws.path("nowhere.txt"), link);
    const dangling = await edit({ file_path: link, old_string: "a", new_string: "b" });
    assert.equal(dangling.isError, true);
    assert.match(
      dangling.text,
      /File does not exist: .*dangling\.txt \(it is a symbolic link to .*nowhere\.txt, which does not exist\)/,
    );
    const danglingCreate = await edit({ file_path: link, old_string: "", new_string: "b" });
    assert.equal(danglingCreate.isError, true);
    assert.match(danglingCreate.text, /symbolic link whose target does not exist/);

    const still = await edit({ file_path: file, old_string: "keep", new_string: "kept" });
    assert.equal(still.isError, undefined);
    assert.equal(await readFile(file, "utf8"), "kept me\n");
  });

  test("an edit through a symbolic link changes the target and keeps the link", async () => {
    const target = await ws.write("real.txt", "value = 1\n");
    const link = ws.path("alias.txt");
    await symlink(target, link);
    const result = await edit({ file_path: link, old_string: "1", new_string: "2" });
    assert.equal(result.isError, undefined);
    assert.equal(await readFile(target, "utf8"), "value = 2\n");
    assert.ok((await lstat(link)).isSymbolicLink(), "the link is still a link");
    assert.equal(await readlink(link), target);
  });
});

describe("edit permission denied (server runs as an unprivileged user)", {
  skip: process.getuid?.() !== 0 ? "needs root to switch to the nobody user" : false,
}, () => {
  test("editing a file the server may read but not write says 'Permission denied'", async () => {
    const ws = await tempWorkspace();
    const mcp = await connectStdio({ cwd: ws.dir, uid: 65534, gid: 65534 });
    try {
      const file = await ws.write("readonly.txt", "locked\n");
      await chmod(file, 0o644);
      const result = await callTool(mcp.client, "edit", { file_path: file, old_string: "locked", new_string: "open" });
      assert.equal(result.isError, true);
      assert.equal(result.text, `Error: Permission denied: ${file}`);
      await mkdir(ws.path("sealed"), { mode: 0o700 });
      await writeFile(ws.path("sealed/inner.txt"), "x");
      const hidden = await callTool(mcp.client, "edit", {
        file_path: ws.path("sealed/inner.txt"),
        old_string: "x",
        new_string: "y",
      });
      assert.equal(hidden.isError, true);
      assert.match(hidden.text, /Permission denied/);
      assert.equal(await readFile(file, "utf8"), "locked\n");
    } finally {
      await mcp.close();
      await ws.cleanup();
    }
  });
});

describe("edit over Streamable HTTP", () => {
  let ws: TempWorkspace;
  before(async () => {
    ws = await tempWorkspace();
  });
  after(() => ws.cleanup());

  test("fuzzy edits, creation and errors behave the same over HTTP", async () => {
    const server = await startHttp({ cwd: ws.dir });
    try {
      const mcp = await server.connect();
      const edit = (args: Record<string, unknown>) => callTool(mcp.client, "edit", args);
      const file = await ws.write("http.py", "class A:\n    def f(self):  \n        return 1\n");
      const fuzzy = await edit({
        file_path: file,
        old_string: "def f(self):\n    return 1\n",
        new_string: "def f(self):\n    return 2\n",
      });
      assert.equal(fuzzy.isError, undefined, fuzzy.text);
      assert.match(fuzzy.text, /the line-trimmed matcher found/);
      assert.equal(await readFile(file, "utf8"), "class A:\n    def f(self):\n        return 2\n");

      const created = await edit({ file_path: ws.path("made/over/http.txt"), old_string: "", new_string: "hi\n" });
      assert.equal(created.isError, undefined);
      assert.equal(await ws.read("made/over/http.txt"), "hi\n");

      const ambiguous = await edit({ file_path: file, old_string: "    ", new_string: "\t" });
      assert.equal(ambiguous.isError, true);
      assert.match(ambiguous.text, /found \d+ times/);
      const missing = await edit({ file_path: file, old_string: "return 3", new_string: "return 4" });
      assert.equal(missing.isError, true);
      assert.match(missing.text, /not found in file\nDid you mean line 3/);
      const bad = await edit({ file_path: file });
      assert.equal(bad.isError, true);
      const good = await edit({ file_path: file, old_string: "return 2", new_string: "return 5" });
      assert.equal(good.isError, undefined);
      await mcp.close();
    } finally {
      await server.stop();
    }
  });
});
