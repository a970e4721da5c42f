// The worst case of the edit tool's fuzzy search (issue #25, point 1) through the real crow-mcp --socket: an
// old_string of 100 lines that does not match exactly, against a file of 500 000 short lines (1 MB), where every
// line is an anchor. Measures the edit's wall time, and the latency of reads from a second session of the same
// crow-mcp sent one after the other while the edit runs (target: the edit answers in under 2 s, a read in 100 ms).
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { CROW_MCP_BIN, connectSocket, type SocketAnswer, type SocketSession, socketInitialize } from "@crow/testkit";
import { summarize, type Timing } from "./lib.js";

/** One worst case: the file's lines and the model's old_string. */
export interface WorstCase {
  name: string;
  content: string;
  oldString: string;
}

/** The cases measured: each makes a different part of the cascade do the most work it can. */
export function worstCases(): WorstCase[] {
  const braces = "}\n".repeat(500_000);
  const code = Array.from({ length: 98 }, (_, i) => `  total += item${i}.price;`);
  return [
    // First and last lines are every line of the file: block anchor has ~50 blocks to weigh at each line.
    { name: "block anchors everywhere", content: braces, oldString: ["}", ...code, "}"].join("\n") },
    // 99 lines that are every line of the file and one that is none: every window is compared in full.
    { name: "windows equal but the last line", content: braces, oldString: `${"}\n".repeat(99)}x` },
  ];
}

/** What one worst case measured. */
export interface WorstCaseResult {
  editMs: number;
  /** The edit's answer, first line. */
  answer: string;
  /** Reads from the other session, sent back to back while the edit ran. */
  reads: Timing;
}

/** Starts crow-mcp on a socket, runs `worst` in one session while another reads a small file, and stops it. */
export async function measureWorstCase(worst: WorstCase): Promise<WorstCaseResult> {
  const dir = mkdtempSync(path.join(tmpdir(), "crow-bench-edit-worst-"));
  const server = await startServer(dir);
  try {
    const big = path.join(dir, "big.txt");
    const small = path.join(dir, "small.txt");
    writeFileSync(big, worst.content);
    writeFileSync(small, "hello\n");
    const editor = await openSession(server.socketPath, dir);
    const reader = await openSession(server.socketPath, dir);
    await callTool(reader, 2, "read", { file_path: small }); // warm: the first read loads the tool's code

    let done = false;
    const start = performance.now();
    const edit = callTool(editor, 2, "edit", { file_path: big, old_string: worst.oldString, new_string: "y" }).then(
      (answer) => {
        done = true;
        return { answer, ms: performance.now() - start };
      },
    );
    const readMs: number[] = [];
    for (let id = 3; !done; id++) {
      const sent = performance.now();
      await callTool(reader, id, "read", { file_path: small });
      if (!done) readMs.push(performance.now() - sent);
    }
    const { answer, ms } = await edit;
    editor.close();
    reader.close();
    return { editMs: ms, answer: firstLine(answer), reads: summarize(readMs) };
  } finally {
    await stopServer(server.child);
    rmSync(dir, { recursive: true, force: true });
  }
}

function firstLine(answer: SocketAnswer): string {
  const content = (answer.result?.content ?? []) as Array<{ text: string }>;
  return (content[0]?.text ?? JSON.stringify(answer)).split("\n")[0] ?? "";
}

async function startServer(dir: string): Promise<{ child: ChildProcess; socketPath: string }> {
  const socketPath = path.join(dir, "mcp.sock");
  const child = spawn(process.execPath, [CROW_MCP_BIN, "--socket", socketPath, "--exit-with-stdin"], {
    cwd: dir,
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
  return { child, socketPath };
}

async function stopServer(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.stdin?.end();
  await exited;
}

async function openSession(socketPath: string, cwd: string): Promise<SocketSession> {
  const session = await connectSocket(socketPath);
  const init = await session.request(socketInitialize(cwd));
  if (!init.result) throw new Error(`initialize failed: ${JSON.stringify(init)}`);
  session.notify({ method: "notifications/initialized" });
  return session;
}

function callTool(session: SocketSession, id: number, name: string, args: object): Promise<SocketAnswer> {
  return session.request({ id, method: "tools/call", params: { name, arguments: args } });
}
