// Language servers of a confined session run inside the sandbox: they read the workspace, write nothing of it, and see
// the environment without its secrets. From the attacker's seat: a hostile repository ships its own
// node_modules/.bin/typescript-language-server (found first, as the project's), which crow-mcp starts on the first
// edit of a .ts file. Needs bwrap, like the other sandbox tests.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
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
const PATIENT = { CROW_LSP: "on", CROW_LSP_WAIT: "90", CROW_LSP_START_WAIT: "120" };
const SECRET = "sk-test-language-server-must-not-see-this";

describe("language servers under the sandbox (workspace-write)", () => {
  let ws: TempWorkspace;
  let home: string;
  let mcp: McpConnection;
  before(async () => {
    ws = await tempWorkspace("crow-lsp-sbx-");
    home = await mkdtemp(path.join("/var/tmp", "crow-lsp-home-"));
    mcp = await connectStdio({
      cwd: ws.dir,
      args: ["--sandbox", "workspace-write"],
      env: { ...PATIENT, HOME: home, OPENAI_API_KEY: SECRET, PATH: `${BIN}${path.delimiter}${process.env.PATH}` },
    });
  });
  after(async () => {
    await mcp.close();
    await ws.cleanup();
    await rm(home, { recursive: true, force: true });
  });

  test("the real server works confined: a broken caller is reported", async () => {
    const dir = ws.path("real");
    await mkdir(dir);
    await writeFile(path.join(dir, "a.ts"), "export function one(): number {\n  return 1;\n}\n");
    const write = await callTool(mcp.client, "write", {
      file_path: path.join(dir, "b.ts"),
      content: 'import { one } from "./a";\nexport const n: number = one();\n',
    });
    assert.equal(write.content.length, 1, write.text);
    const broke = await callTool(mcp.client, "edit", {
      file_path: path.join(dir, "a.ts"),
      old_string: "one(): number {\n  return 1;",
      new_string: 'one(): string {\n  return "1";',
    });
    assert.match(broke.text, /real\/b\.ts:2:14 error TS2322: Type 'string' is not assignable to type 'number'\./);
  });

  test("a server planted in the repository writes nothing of the workspace or home and sees no secret", async () => {
    const project = ws.path("hostile");
    await mkdir(path.join(project, "node_modules", ".bin"), { recursive: true });
    const planted = path.join(project, "node_modules", ".bin", "typescript-language-server");
    await writeFile(
      planted,
      [
        "#!/bin/sh",
        `echo owned > ${path.join(project, "pwned")} 2>/dev/null && echo wrote-workspace >&2`,
        `echo owned > ${path.join(ws.dir, "pwned")} 2>/dev/null && echo wrote-parent >&2`,
        `echo owned > ${path.join(home, "pwned")} 2>/dev/null && echo wrote-home >&2`,
        'echo "key=[$OPENAI_API_KEY]" >&2',
        "exit 3",
        "",
      ].join("\n"),
    );
    await chmod(planted, 0o755);
    // The hostile project is its own workspace: the session works in it.
    const session = await connectStdio({
      cwd: project,
      args: ["--sandbox", "workspace-write"],
      env: { ...PATIENT, HOME: home, OPENAI_API_KEY: SECRET },
    });
    try {
      const result = await callTool(session.client, "write", {
        file_path: path.join(project, "x.ts"),
        content: "export const x = 1;\n",
      });
      assert.match(result.text, /^Successfully wrote 1 lines/);
      // What it printed on stderr comes back in the notice: its environment had no key.
      assert.match(result.text, /typescript language server exited with code 3: .*key=\[\]/);
      assert.equal(result.text.includes(SECRET), false);
      // (A write to the parent, under /tmp, lands in the server's private /tmp: it says wrote-parent, harmlessly.)
      assert.equal(existsSync(path.join(project, "pwned")), false);
      // Said once: the next change is not held up starting it again, nor told again.
      const next = await callTool(session.client, "write", {
        file_path: path.join(project, "y.ts"),
        content: "export const y = 2;\n",
      });
      assert.equal(next.content.length, 1, next.text);
      assert.equal(existsSync(path.join(ws.dir, "pwned")), false);
      assert.equal(existsSync(path.join(home, "pwned")), false);
    } finally {
      await session.close();
    }
  });
});
