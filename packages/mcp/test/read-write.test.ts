import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { chmod, lstat, mkdir, stat, symlink, writeFile } from "node:fs/promises";
import { after, before, describe, test } from "node:test";
import {
  callTool,
  connectStdio,
  type McpConnection,
  startHttp,
  type TempWorkspace,
  tempWorkspace,
} from "@crow/testkit";
import { NotRegularFileError, writeFileAtomic } from "../src/fs/atomic.js";

// A 1×1 transparent PNG.
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=",
  "base64",
);

describe("read and write over stdio", () => {
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
  const read = (args: Record<string, unknown>) => callTool(mcp.client, "read", args);
  const write = (args: Record<string, unknown>) => callTool(mcp.client, "write", args);

  test("pages with offset and limit, tab-separated numbers and a next-offset hint", async () => {
    const lines = Array.from({ length: 2500 }, (_, i) => `line ${i + 1}`);
    const file = await ws.write("long.txt", `${lines.join("\n")}\n`);
    // Without offset or limit: the lines as they are, and where the cut is, by number.
    const first = await read({ file_path: file });
    assert.ok(first.text.startsWith("line 1\nline 2\n"));
    assert.match(
      first.text,
      /\nline 2000\n\n\[File truncated: showing lines 1-2000 of 2500 total\. Use offset=2001 to continue/,
    );
    const numbered = await read({ file_path: file, offset: 1 });
    assert.ok(numbered.text.startsWith("1\tline 1\n2\tline 2\n"));
    assert.match(numbered.text, /\n2000\tline 2000\n\n\[File truncated: showing lines 1-2000/);
    assert.ok((await read({ file_path: file, limit: 2 })).text.startsWith("1\tline 1\n2\tline 2\n\n[File truncated"));
    const page = await read({ file_path: file, offset: 2498, limit: 10 });
    assert.equal(page.text, "2498\tline 2498\n2499\tline 2499\n2500\tline 2500");
    const middle = await read({ file_path: file, offset: 9, limit: 3 });
    assert.equal(
      middle.text,
      "9\tline 9\n10\tline 10\n11\tline 11\n\n[File truncated: showing lines 9-11 of 2500 total. Use offset=12 to continue, or offset and limit parameters to read other sections.]",
    );
    const past = await read({ file_path: file, offset: 3000 });
    assert.match(past.text, /offset 3000 is past its end/);
  });

  test("truncates lines over 2000 characters and says so", async () => {
    const file = await ws.write("wide.txt", `short\n${"x".repeat(5000)}\n`);
    const result = await read({ file_path: file });
    assert.ok(result.text.includes(`\n${"x".repeat(2000)}... [line truncated]`));
    assert.ok(result.text.endsWith("[Some lines exceeded 2000 characters and were truncated.]"));
  });

  test("CRLF files read without stray carriage returns", async () => {
    const file = await ws.write("crlf.txt", "a\r\nb\r\n");
    assert.equal((await read({ file_path: file })).text, "a\nb");
  });

  test("a UTF-8 character cut at the 8 KiB probe boundary is still text", async () => {
    const content = `${`${"a".repeat(99)}\n`.repeat(81)}${"a".repeat(91)}é tail\n`; // 'é' spans bytes 8191–8192
    const file = await ws.write("boundary.txt", content);
    const result = await read({ file_path: file });
    assert.equal(result.isError, undefined, result.text);
    assert.ok(result.text.endsWith("é tail"));
  });

  test("binary files, empty files and images", async () => {
    const bin = await ws.write("blob.bin", Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x00, 0x01, 0x02]));
    const binary = await read({ file_path: bin });
    assert.equal(binary.isError, true);
    assert.equal(
      binary.text,
      `Error: Cannot read binary file: ${bin}. Use the terminal (head, grep, xxd) to look at it.`,
    );

    const empty = await ws.write("empty.txt", "  \n");
    assert.equal(
      (await read({ file_path: empty })).text,
      `<system-reminder>\nThe file ${empty} exists but has empty contents.\n</system-reminder>`,
    );

    const png = await ws.write("pixel.png", PNG);
    const image = await read({ file_path: png });
    assert.equal(image.isError, undefined);
    const block = image.content.find((c) => c.type === "image");
    assert.ok(block && block.type === "image");
    assert.equal(block.mimeType, "image/png");
    assert.deepEqual(Buffer.from(block.data, "base64"), PNG);
  });

  test("files over 10 MB are refused with the size and a way forward", async () => {
    const file = ws.path("huge.log");
    await writeFile(file, Buffer.alloc(10 * 1024 * 1024 + 1, "a"));
    const result = await read({ file_path: file });
    assert.equal(result.isError, true);
    assert.match(result.text, /^Error: File too large: 10485761 bytes \(max 10485760 bytes\)\. Use the terminal/);
  });

  test("non-UTF-8 text is refused with the line of the first bad byte", async () => {
    const file = await ws.write("latin1.txt", Buffer.from("ok\ncaf\xe9\n", "latin1"));
    const result = await read({ file_path: file });
    assert.equal(result.isError, true);
    assert.match(result.text, /not valid UTF-8 text: .*latin1\.txt \(first invalid byte on line 2\)/);
  });

  test("write creates nested directories and reports the line count", async () => {
    const file = ws.path("deep/er/still/new.ts");
    const result = await write({ file_path: file, content: "export const a = 1;\nexport const b = 2;\n" });
    assert.equal(result.text, `Successfully wrote 2 lines to ${file}`);
    assert.equal(await ws.read("deep/er/still/new.ts"), "export const a = 1;\nexport const b = 2;\n");
  });

  test("write and edit return the change they made as a diff in _meta, for a client that cannot see this disk", async () => {
    const file = `${ws.dir}/diffed/notes.txt`;
    const created = await write({ file_path: file, content: "one\ntwo\n" });
    assert.deepEqual(created._meta?.["crow/diff"], { path: file, oldText: null, newText: "one\ntwo\n" });
    const replaced = await write({ file_path: file, content: "one\nthree\n" });
    assert.deepEqual(replaced._meta?.["crow/diff"], { path: file, oldText: "one\ntwo\n", newText: "one\nthree\n" });
    const edited = await callTool(mcp.client, "edit", { file_path: file, old_string: "three", new_string: "four" });
    assert.deepEqual(edited._meta?.["crow/diff"], { path: file, oldText: "one\nthree\n", newText: "one\nfour\n" });
    const failed = await callTool(mcp.client, "edit", { file_path: file, old_string: "absent", new_string: "x" });
    assert.equal(failed.isError, true);
    assert.equal(failed._meta?.["crow/diff"], undefined);
  });

  test("a dry run (_meta crow/dryRun) of write and edit returns the diff, refuses as the real call would, writes nothing", async () => {
    const dry = async (name: string, args: Record<string, unknown>) => {
      const result = (await mcp.client.callTool({ name, arguments: args, _meta: { "crow/dryRun": true } })) as {
        isError?: boolean;
        content: Array<{ type: string; text?: string }>;
        _meta?: Record<string, unknown>;
      };
      return { ...result, text: result.content.map((c) => c.text ?? "").join("\n") };
    };
    const { tools } = await mcp.client.listTools();
    for (const name of ["write", "edit"]) {
      assert.equal(tools.find((t) => t.name === name)?._meta?.["crow/dryRun"], true, `${name} advertises dry runs`);
    }
    const file = await ws.write("dry/plan.txt", "alpha\nbeta\n");
    const written = await dry("write", { file_path: file, content: "gamma\n" });
    assert.deepEqual(written._meta?.["crow/diff"], { path: file, oldText: "alpha\nbeta\n", newText: "gamma\n" });
    const edited = await dry("edit", { file_path: file, old_string: "beta", new_string: "BETA" });
    assert.deepEqual(edited._meta?.["crow/diff"], { path: file, oldText: "alpha\nbeta\n", newText: "alpha\nBETA\n" });
    const created = await dry("edit", { file_path: ws.path("dry/new.txt"), old_string: "", new_string: "new\n" });
    assert.deepEqual(created._meta?.["crow/diff"], { path: ws.path("dry/new.txt"), oldText: null, newText: "new\n" });
    assert.equal(await ws.read("dry/plan.txt"), "alpha\nbeta\n", "nothing was written");
    await assert.rejects(stat(ws.path("dry/new.txt")), "nothing was created");
    // A bad edit fails at proposal time with the very message the real call gives.
    const bad = { file_path: file, old_string: "absent", new_string: "x" };
    const proposed = await dry("edit", bad);
    const real = await callTool(mcp.client, "edit", bad);
    assert.equal(proposed.isError, true);
    assert.equal(proposed.text, real.text);
  });

  test("write replaces atomically, keeps the file's mode and follows symlinks", async () => {
    const script = await ws.write("run.sh", "#!/bin/sh\necho old\n");
    await chmod(script, 0o750);
    await write({ file_path: script, content: "#!/bin/sh\necho new\n" });
    assert.equal((await stat(script)).mode & 0o777, 0o750);
    assert.equal(await ws.read("run.sh"), "#!/bin/sh\necho new\n");

    const target = await ws.write("real.txt", "before");
    await symlink(target, ws.path("link.txt"));
    await write({ file_path: ws.path("link.txt"), content: "after" });
    assert.equal(await ws.read("real.txt"), "after");
    assert.ok((await import("node:fs/promises").then((fs) => fs.lstat(ws.path("link.txt")))).isSymbolicLink());
  });

  test("write refuses a FIFO, and a link to one, and leaves it a FIFO", async () => {
    const fifo = ws.path("pipe");
    execFileSync("mkfifo", [fifo]);
    await symlink(fifo, ws.path("pipe-link"));
    for (const file of [fifo, ws.path("pipe-link")]) {
      const result = await write({ file_path: file, content: "data\n" });
      assert.equal(result.isError, true, result.text);
      assert.match(result.text, /is a FIFO \(named pipe\), not a regular file, and was left as it is/);
    }
    assert.ok((await lstat(fifo)).isFIFO(), "the FIFO was replaced");
    // Below the tool, for every caller (edit saves through it too).
    await assert.rejects(writeFileAtomic(fifo, "data"), NotRegularFileError);
    assert.ok((await lstat(fifo)).isFIFO());
  });

  test("bad input: each gets an isError result and the server keeps serving", async () => {
    const cases: Array<[string, Record<string, unknown>, RegExp]> = [
      ["read", {}, /file_path/],
      ["read", { file_path: "/tmp/x", bogus: 1 }, /bogus/],
      ["read", { file_path: 42 }, /file_path/],
      ["read", { file_path: "/tmp/x", offset: "ten" }, /offset/],
      [
        "read",
        { file_path: "relative.txt" },
        /must be an absolute path, got "relative\.txt"\. In the working directory that is \/.*relative\.txt/,
      ],
      ["read", { file_path: ws.dir }, /^Error: Path is a directory, not a file:/],
      ["read", { file_path: ws.path("nope.txt") }, /^Error: File does not exist: .*nope\.txt$/],
      ["write", { file_path: "out.txt", content: "x" }, /must be an absolute path/],
      ["write", { file_path: ws.dir, content: "x" }, /^Error: Path is a directory, not a file:/],
      ["write", { file_path: ws.path("a.txt") }, /content/],
    ];
    for (const [tool, args, expected] of cases) {
      const result = await callTool(mcp.client, tool, args);
      assert.equal(result.isError, true, `${tool} ${JSON.stringify(args)} should fail`);
      assert.match(result.text, expected);
    }
    await symlink(ws.path("gone.txt"), ws.path("dangling.txt"));
    const dangling = await read({ file_path: ws.path("dangling.txt") });
    assert.equal(dangling.isError, true);
    assert.match(
      dangling.text,
      /does not exist: .*dangling\.txt \(it is a symbolic link to .*gone\.txt, which does not exist\)/,
    );
    const danglingWrite = await write({ file_path: ws.path("dangling.txt"), content: "x" });
    assert.equal(danglingWrite.isError, true);
    assert.match(danglingWrite.text, /symbolic link whose target does not exist/);

    const blocker = await ws.write("plainfile", "x");
    const underFile = await write({ file_path: `${blocker}/child.txt`, content: "x" });
    assert.equal(underFile.isError, true);
    assert.match(underFile.text, /Failed to create directory/);

    const still = await write({ file_path: ws.path("after.txt"), content: "fine" });
    assert.equal(still.isError, undefined);
  });
});

describe("permission denied (server runs as an unprivileged user)", {
  skip: process.getuid?.() !== 0 ? "needs root to switch to the nobody user" : false,
}, () => {
  let ws: TempWorkspace;
  let mcp: McpConnection;
  before(async () => {
    ws = await tempWorkspace();
    mcp = await connectStdio({ cwd: ws.dir, uid: 65534, gid: 65534 });
  });
  after(async () => {
    await mcp.close();
    await ws.cleanup();
  });

  test("read and write of a root-only file say 'Permission denied'", async () => {
    const secret = await ws.write("secret.txt", "top secret");
    await chmod(secret, 0o600);
    const read = await callTool(mcp.client, "read", { file_path: secret });
    assert.equal(read.isError, true);
    assert.equal(read.text, `Error: Permission denied: ${secret}`);
    await mkdir(ws.path("locked"), { mode: 0o755 });
    const write = await callTool(mcp.client, "write", { file_path: ws.path("locked/new.txt"), content: "x" });
    assert.equal(write.isError, true);
    assert.equal(write.text, `Error: Permission denied: ${ws.path("locked/new.txt")}`);
    const mkdirDenied = await callTool(mcp.client, "write", { file_path: ws.path("locked/sub/new.txt"), content: "x" });
    assert.equal(mkdirDenied.isError, true);
    assert.equal(mkdirDenied.text, `Error: Permission denied creating directory: ${ws.path("locked/sub")}`);
  });
});

describe("read and write over HTTP", () => {
  test("paging and images work the same over Streamable HTTP", async () => {
    const ws = await tempWorkspace();
    const server = await startHttp({ cwd: ws.dir });
    try {
      const mcp = await server.connect();
      const file = await ws.write("n.txt", "a\nb\nc\n");
      assert.equal(
        (await callTool(mcp.client, "read", { file_path: file, offset: 2, limit: 1 })).text.split("\n")[0],
        "2\tb",
      );
      const png = await ws.write("p.png", PNG);
      const image = await callTool(mcp.client, "read", { file_path: png });
      assert.ok(image.content.some((c) => c.type === "image"));
      await mcp.close();
    } finally {
      await server.stop();
      await ws.cleanup();
    }
  });
});
