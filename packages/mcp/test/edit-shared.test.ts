// One crow-mcp serves every session of an agent (issue #25, point 1): an edit whose fuzzy search is long must neither
// freeze the others nor run without end. Driven through the real crow-mcp --socket with two MCP sessions.
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import {
  CROW_MCP_BIN,
  connectSocket,
  type SocketAnswer,
  type SocketSession,
  socketInitialize,
  type TempWorkspace,
  tempWorkspace,
} from "@crow/testkit";

const text = (answer: SocketAnswer) => ((answer.result?.content ?? []) as Array<{ text: string }>)[0]?.text ?? "";

async function openSession(socketPath: string, cwd: string): Promise<SocketSession> {
  const session = await connectSocket(socketPath);
  const init = await session.request(socketInitialize(cwd));
  assert.ok(init.result, JSON.stringify(init));
  session.notify({ method: "notifications/initialized" });
  return session;
}

function callTool(session: SocketSession, id: number, name: string, args: object): Promise<SocketAnswer> {
  return session.request({ id, method: "tools/call", params: { name, arguments: args } });
}

describe("an edit with a long fuzzy search, on a crow-mcp shared by two sessions", () => {
  let ws: TempWorkspace;
  let dir: string;
  let child: ChildProcess;
  let socketPath: string;
  before(async () => {
    ws = await tempWorkspace();
    dir = mkdtempSync(path.join(tmpdir(), "crow-mcp-test-"));
    socketPath = path.join(dir, "mcp.sock");
    child = spawn(process.execPath, [CROW_MCP_BIN, "--socket", socketPath, "--exit-with-stdin"], {
      cwd: ws.dir,
      env: { ...process.env, HOME: dir },
      stdio: ["pipe", "ignore", "pipe"],
    });
    let stderr = "";
    await new Promise<void>((resolve, reject) => {
      child.stderr?.on("data", (chunk: Buffer) => {
        stderr += chunk.toString();
        if (stderr.includes("listening on unix:")) resolve();
      });
      child.once("exit", (code) => reject(new Error(`crow-mcp exited with ${code} before listening: ${stderr}`)));
    });
  });
  after(async () => {
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.stdin?.end();
    await exited;
    rmSync(dir, { recursive: true, force: true });
    await ws.cleanup();
  });

  test("gives up with a message the model can act on, and another session's read answers first", async () => {
    // 500 000 short lines, and an old_string whose 99 first lines are each of them: every window of the file has to
    // be looked at by the line-based matchers.
    const big = await ws.write("big.txt", "}\n".repeat(500_000));
    const small = await ws.write("small.txt", "hello\n");
    const editor = await openSession(socketPath, ws.dir);
    const reader = await openSession(socketPath, ws.dir);
    const order: string[] = [];
    const edited = callTool(editor, 2, "edit", {
      file_path: big,
      old_string: `${"}\n".repeat(99)}x`,
      new_string: "y",
    }).then((answer) => {
      order.push("edit");
      return answer;
    });
    // The read goes out once the edit has read its 1 MB and is searching (which takes far longer than this pause):
    // a search that held the thread would answer it only after the edit.
    await new Promise((resolve) => setTimeout(resolve, 150));
    const read = await callTool(reader, 2, "read", { file_path: small }).then((answer) => {
      order.push("read");
      return answer;
    });
    const edit = await edited;
    assert.deepEqual(order, ["read", "edit"]);
    assert.match(text(read), /hello/);
    assert.equal(edit.result?.isError, true);
    assert.match(text(edit), /the fuzzy search gave up/);
    assert.match(text(edit), /Give a shorter old_string copied exactly from the file/);
  });
});
