// Diagnostics after write and edit, through the real crow-mcp against the real language servers the repository has as
// dev dependencies (typescript-language-server with its typescript, pyright), found on PATH as a user has them.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import {
  callTool,
  connectStdio,
  type McpConnection,
  REPO_ROOT,
  type TempWorkspace,
  tempWorkspace,
} from "@crow/testkit";

const BIN = path.join(REPO_ROOT, "node_modules", ".bin");
/** Budgets no loaded machine reaches: these tests are about what is reported, not how fast (bench/ measures that). */
const PATIENT = { CROW_LSP: "on", CROW_LSP_WAIT: "90", CROW_LSP_START_WAIT: "120" };

/** The pids of the processes whose parent is `parent` and whose command line mentions `needle`. */
function childrenMatching(parent: number, needle: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8");
      if (ppid === parent && cmdline.includes(needle)) found.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return found;
}

async function waitUntilGone(pid: number): Promise<void> {
  for (;;) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("diagnostics after a change (typescript-language-server)", () => {
  let ws: TempWorkspace;
  let mcp: McpConnection;
  before(async () => {
    ws = await tempWorkspace();
    await ws.write(
      "tsconfig.json",
      JSON.stringify({
        compilerOptions: { strict: true, target: "es2022", module: "esnext", moduleResolution: "bundler" },
      }),
    );
    mcp = await connectStdio({ cwd: ws.dir, env: { ...PATIENT, PATH: `${BIN}${path.delimiter}${process.env.PATH}` } });
  });
  after(async () => {
    await mcp.close();
    await ws.cleanup();
  });
  const write = (file: string, content: string) =>
    callTool(mcp.client, "write", { file_path: path.join(ws.dir, file), content });
  const edit = (file: string, old_string: string, new_string: string) =>
    callTool(mcp.client, "edit", { file_path: path.join(ws.dir, file), old_string, new_string });

  test("a clean change adds nothing; breaking a caller in another file reports it with its line; the fix says so", async () => {
    const a = await write("a.ts", 'export function greet(name: string): string {\n  return "hi " + name;\n}\n');
    assert.equal(a.text, `Successfully wrote 3 lines to ${path.join(ws.dir, "a.ts")}`);
    const b = await write("b.ts", 'import { greet } from "./a";\n\nexport const line = greet("you");\n');
    assert.equal(b.text, `Successfully wrote 3 lines to ${path.join(ws.dir, "b.ts")}`);

    const broke = await edit("a.ts", "greet(name: string)", "greet(name: string, times: number)");
    assert.equal(broke.isError, undefined);
    assert.match(broke.text, /^Successfully edited /);
    assert.match(
      broke.text,
      /Diagnostics \(typescript\) this change introduced: 1 error\nb\.ts:3:21 error TS2554: Expected 2 arguments, but got 1\./,
    );
    const meta = broke._meta?.["crow/diagnostics"] as { added: Array<{ file: string; line: number }> };
    assert.deepEqual(
      meta.added.map((d) => [d.file, d.line]),
      [[path.join(ws.dir, "b.ts"), 3]],
    );

    const fixed = await edit("b.ts", 'greet("you")', 'greet("you", 2)');
    assert.match(fixed.text, /Diagnostics \(typescript\): the 1 error reported before this change is fixed\./);

    const clean = await edit("a.ts", '  return "hi " + name;', '  return "hello " + name.repeat(times);');
    assert.equal(clean.text.includes("Diagnostics"), false, clean.text);
    assert.equal(clean.content.length, 1);
  });

  test("two changes sent at once: the error goes to the change that made it", async () => {
    await write("p.ts", "export const twice = (n: number) => n * 2;\n");
    await write("q.ts", 'import { twice } from "./p";\nexport const v = twice(1);\n');
    const [breaking, unrelated] = await Promise.all([
      edit("p.ts", "(n: number) => n * 2", "(n: string) => n.repeat(2)"),
      write("r.ts", "export const r = 1;\n"),
    ]);
    assert.match(
      breaking.text,
      /q\.ts:2:24 error TS2345: Argument of type 'number' is not assignable to parameter of type 'string'\./,
    );
    assert.equal(unrelated.content.length, 1, unrelated.text);
  });

  test("a language server killed mid-session is started again, with the files it had open", async () => {
    const servers = childrenMatching(mcp.pid ?? 0, "typescript-language-server");
    assert.equal(servers.length, 1, "one typescript-language-server under crow-mcp");
    const [pid] = servers;
    assert.ok(pid);
    process.kill(pid, "SIGKILL");
    await waitUntilGone(pid);
    const broke = await edit("a.ts", "times: number)", "times: number, loud: boolean)");
    assert.match(broke.text, /b\.ts:3:21 error TS2554: Expected 3 arguments, but got 2\./);
    const again = childrenMatching(mcp.pid ?? 0, "typescript-language-server");
    assert.equal(again.length, 1);
    assert.notEqual(again[0], pid);
  });
});

describe("diagnostics after a change (pyright)", () => {
  let ws: TempWorkspace;
  let mcp: McpConnection;
  before(async () => {
    ws = await tempWorkspace();
    mcp = await connectStdio({ cwd: ws.dir, env: { ...PATIENT, PATH: `${BIN}${path.delimiter}${process.env.PATH}` } });
  });
  after(async () => {
    await mcp.close();
    await ws.cleanup();
  });

  test("a type error written to a new Python file is reported", async () => {
    const file = path.join(ws.dir, "calc.py");
    const result = await callTool(mcp.client, "write", {
      file_path: file,
      content: "def double(x: int) -> int:\n    return x * 2\n\n\ntotal: str = double(2)\n",
    });
    assert.match(result.text, /^Successfully wrote 5 lines/);
    assert.match(
      result.text,
      /Diagnostics \(python\) this change introduced: 1 error\ncalc\.py:5:14 error reportAssignmentType: Type "int" is not assignable to declared type "str"/,
    );
  });
});

describe("no language server on PATH", () => {
  let ws: TempWorkspace;
  let mcp: McpConnection;
  before(async () => {
    ws = await tempWorkspace();
    mcp = await connectStdio({ cwd: ws.dir, env: { CROW_LSP: "on", PATH: "/usr/bin:/bin" } });
  });
  after(async () => {
    await mcp.close();
    await ws.cleanup();
  });

  test("the result is as before, with one notice the first time", async () => {
    const file = path.join(ws.dir, "a.ts");
    const first = await callTool(mcp.client, "write", { file_path: file, content: "export const x: number = 'no';\n" });
    assert.equal(first.content.length, 2);
    assert.equal(first.content[0]?.type === "text" && first.content[0].text, `Successfully wrote 1 lines to ${file}`);
    assert.match(
      first.text,
      /Note: no typescript language server was found \(typescript-language-server on PATH or in the project's node_modules\/\.bin\)/,
    );
    const second = await callTool(mcp.client, "edit", {
      file_path: file,
      old_string: "'no'",
      new_string: "'still no'",
    });
    assert.equal(second.content.length, 1, second.text);
    assert.match(second.text, /^Successfully edited /);
  });
});
