// A language of one's own, configured the way the agent sends config.yaml's language_servers (initialize's
// `_meta["crow/lsp"]` on crow-mcp's socket), served by a server that only pushes diagnostics (fixtures/push-lsp.mjs,
// as gopls and rust-analyzer do): crow-mcp waits for the list of the changed document's version.
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import {
  CROW_MCP_BIN,
  connectSocket,
  type SocketAnswer,
  type SocketSession,
  socketInitialize,
  type TempWorkspace,
  tempWorkspace,
} from "@crow/testkit";

const SERVER = fileURLToPath(new URL("./fixtures/push-lsp.mjs", import.meta.url));
const text = (answer: SocketAnswer) =>
  ((answer.result?.content ?? []) as Array<{ text: string }>).map((block) => block.text).join("\n");

describe("a push-only language server configured for the session", () => {
  let ws: TempWorkspace;
  let dir: string;
  let child: ChildProcess;
  let session: SocketSession;
  let id = 1;
  const call = (name: string, args: object) =>
    session.request({ id: ++id, method: "tools/call", params: { name, arguments: args } });

  before(async () => {
    ws = await tempWorkspace();
    dir = mkdtempSync(path.join(tmpdir(), "crow-mcp-test-"));
    const socketPath = path.join(dir, "mcp.sock");
    child = spawn(process.execPath, [CROW_MCP_BIN, "--socket", socketPath, "--exit-with-stdin"], {
      cwd: ws.dir,
      env: { ...process.env, HOME: dir, CROW_LSP: "on" },
      stdio: ["pipe", "ignore", "pipe"],
    });
    await new Promise<void>((resolve, reject) => {
      let stderr = "";
      child.stderr?.on("data", (chunk: Buffer) => {
        stderr += chunk.toString();
        if (stderr.includes("listening on unix:")) resolve();
      });
      child.once("exit", (code) => reject(new Error(`crow-mcp exited with ${code}: ${stderr}`)));
    });
    session = await connectSocket(socketPath);
    const init = socketInitialize(ws.dir) as { id: number; params: { _meta: Record<string, unknown> } };
    init.params._meta["crow/lsp"] = {
      languages: { badlang: { command: SERVER, files: ["*.bad"] } },
      waitMs: 60_000,
      startWaitMs: 60_000,
    };
    assert.ok((await session.request(init)).result);
    session.notify({ method: "notifications/initialized" });
  });
  after(async () => {
    session.close();
    child.stdin?.end();
    await new Promise((resolve) => child.once("exit", resolve));
    rmSync(dir, { recursive: true, force: true });
    await ws.cleanup();
  });

  test("a clean file adds nothing; the change that adds an error reports it; the fix says it is gone", async () => {
    const file = ws.path("x.bad");
    const clean = await call("write", { file_path: file, content: "fine\nfine\n" });
    assert.equal(text(clean), `Successfully wrote 2 lines to ${file}`);
    const broke = await call("edit", { file_path: file, old_string: "fine\nfine", new_string: "fine\nso BAD" });
    assert.match(
      text(broke),
      /Diagnostics \(badlang\) this change introduced: 1 error\nx\.bad:2:4 error E1: bad word$/,
    );
    const fixed = await call("edit", { file_path: file, old_string: "so BAD", new_string: "so good" });
    assert.match(text(fixed), /Diagnostics \(badlang\): the 1 error reported before this change is fixed\.$/);
  });
});
