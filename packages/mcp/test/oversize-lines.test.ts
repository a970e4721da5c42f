/**
 * A message over the line limit does not end crow-mcp: on stdio (limit 10 MB) and on the unix socket (64 MB) the
 * line is dropped, stderr says what and why, the request is answered with a JSON-RPC error naming the size and the
 * limit — its id read from the line's start, or from its end where the MCP SDK puts it — and the next request is
 * served. Plus the pieces: the splitter keeps memory bounded, and the id and kind are read from the line's ends.
 */
import assert from "node:assert/strict";
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, test } from "node:test";
import { CROW_MCP_BIN, connectSocket, socketInitialize } from "@crow/testkit";
import { BoundedLineSplitter, HEAD_BYTES, type OversizeLine, TAIL_BYTES } from "../src/bounded-lines.js";
import { describeOversize, oversizeError } from "../src/oversize-reply.js";

/** The limits: stdio's is the MCP SDK's stdio transport's, the socket's fits the largest `write` crow sends. */
const STDIO_MAX_LINE_BYTES = 10 * 1024 * 1024;
const MAX_LINE_BYTES = 64 * 1024 * 1024;

interface Answer {
  id?: unknown;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: { bytes: number; limit: number } };
}

/** A `tools/call` line of about `bytes` bytes, keys in the MCP SDK's order (id last) or id first. */
function bigCall(id: number, bytes: number, idFirst: boolean): string {
  const params = { name: "write", arguments: { file_path: "/tmp/never-written.txt", content: "x".repeat(bytes) } };
  return JSON.stringify(
    idFirst
      ? { jsonrpc: "2.0", id, method: "tools/call", params }
      : { method: "tools/call", params, jsonrpc: "2.0", id },
  );
}

/** crow-mcp on stdio, as raw lines. */
class StdioServer {
  readonly child: ChildProcessWithoutNullStreams;
  stderr = "";
  private buffer = "";
  private readonly waiting = new Map<unknown, (answer: Answer) => void>();
  private readonly dir = mkdtempSync(path.join(tmpdir(), "crow-mcp-stdio-"));
  readonly exited: Promise<number | null>;

  constructor() {
    this.child = spawn(process.execPath, [CROW_MCP_BIN], { cwd: this.dir, env: { ...process.env, HOME: this.dir } });
    this.child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      this.buffer += chunk;
      for (let end = this.buffer.indexOf("\n"); end >= 0; end = this.buffer.indexOf("\n")) {
        const answer = JSON.parse(this.buffer.slice(0, end)) as Answer;
        this.buffer = this.buffer.slice(end + 1);
        this.waiting.get(answer.id)?.(answer);
      }
    });
    this.child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      this.stderr += chunk;
    });
    this.exited = new Promise((resolve) => this.child.once("exit", resolve));
  }

  /** Writes `line` and resolves with the answer to `id`. */
  send(line: string, id: number): Promise<Answer> {
    const answered = new Promise<Answer>((resolve, reject) => {
      this.waiting.set(id, resolve);
      void this.exited.then((code) =>
        reject(new Error(`crow-mcp exited (${code}) before answering ${id}: ${this.stderr}`)),
      );
    });
    this.child.stdin.write(`${line}\n`);
    return answered;
  }

  async stop(): Promise<void> {
    this.child.stdin.end();
    await this.exited;
    rmSync(this.dir, { recursive: true, force: true });
  }
}

function assertTooLarge(answer: Answer, limit: number): void {
  assert.equal(answer.error?.code, -32600, JSON.stringify(answer));
  assert.match(answer.error?.message ?? "", new RegExp(`over the limit of ${limit} bytes`));
  assert.ok((answer.error?.data?.bytes ?? 0) > limit);
}

describe("crow-mcp: a message over the line limit is answered, not fatal", { timeout: 120_000 }, () => {
  test("stdio: an 11 MB request gets an error (id first or last), stderr says why, the next request is served", async () => {
    const server = new StdioServer();
    try {
      const init = await server.send(JSON.stringify({ jsonrpc: "2.0", ...socketInitialize() }), 1);
      assert.ok(init.result, JSON.stringify(init));
      server.child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`);
      assertTooLarge(await server.send(bigCall(2, 11 * 1024 * 1024, false), 2), STDIO_MAX_LINE_BYTES);
      assertTooLarge(await server.send(bigCall(3, 11 * 1024 * 1024, true), 3), STDIO_MAX_LINE_BYTES);
      assert.match(
        server.stderr,
        /dropped a request tools\/call \(id 2\): the message is \d+ bytes \(11\.0 MB\), over the limit of 10485760 bytes/,
      );
      const list = await server.send(JSON.stringify({ jsonrpc: "2.0", id: 4, method: "tools/list" }), 4);
      assert.ok(Array.isArray(list.result?.tools), JSON.stringify(list));
      assert.equal(server.child.exitCode, null, "still serving");
    } finally {
      await server.stop();
    }
  });

  test("socket: a 65 MB request gets an error, the connection and its session go on", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "crow-mcp-test-"));
    const socketPath = path.join(dir, "mcp.sock");
    const child = spawn(process.execPath, [CROW_MCP_BIN, "--socket", socketPath, "--exit-with-stdin"], {
      cwd: dir,
      env: { ...process.env, HOME: dir },
      stdio: ["pipe", "ignore", "pipe"],
    });
    let stderr = "";
    try {
      await new Promise<void>((resolve, reject) => {
        child.stderr.on("data", (chunk: Buffer) => {
          stderr += chunk.toString();
          if (stderr.includes("listening on unix:")) resolve();
        });
        child.once("exit", (code) => reject(new Error(`crow-mcp exited with ${code}: ${stderr}`)));
      });
      const session = await connectSocket(socketPath);
      assert.ok((await session.request(socketInitialize(dir))).result);
      session.notify({ method: "notifications/initialized" });
      const big = JSON.parse(bigCall(2, MAX_LINE_BYTES + 1024 * 1024, false)) as { id: number } & Record<
        string,
        unknown
      >;
      assertTooLarge(await session.request(big), MAX_LINE_BYTES);
      const list = await session.request({ id: 3, method: "tools/list" });
      assert.ok(Array.isArray(list.result?.tools), JSON.stringify(list));
      assert.match(stderr, /dropped a request tools\/call \(id 2\)/);
      session.close();
    } finally {
      child.stdin.end();
      await new Promise((resolve) => child.once("exit", resolve));
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("BoundedLineSplitter", () => {
  const split = (limit: number, chunks: string[]) => {
    const lines: string[] = [];
    const oversize: OversizeLine[] = [];
    const splitter = new BoundedLineSplitter(
      limit,
      (l) => lines.push(l.toString()),
      (o) => oversize.push(o),
    );
    for (const chunk of chunks) splitter.push(Buffer.from(chunk));
    splitter.end();
    return { lines, oversize };
  };

  test("lines within the limit pass whole, across chunks; a longer one is counted and skipped", () => {
    const long = `{"id":7,${"y".repeat(5000)}}`;
    const { lines, oversize } = split(100, ["ab\ncd", "ef\n", long.slice(0, 3000), long.slice(3000), "\nlast"]);
    assert.deepEqual(lines, ["ab", "cdef", "last"]);
    assert.equal(oversize.length, 1);
    assert.equal(oversize[0]?.bytes, long.length);
    assert.equal(oversize[0]?.head.toString(), long.slice(0, HEAD_BYTES));
    assert.equal(oversize[0]?.tail.toString(), long.slice(-TAIL_BYTES));
  });

  test("memory stays bounded while a line is skipped: its bytes are not kept", () => {
    const splitter = new BoundedLineSplitter(
      1024,
      () => {},
      () => {},
    );
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    const before = process.memoryUsage().arrayBuffers;
    for (let i = 0; i < 1024; i++) splitter.push(chunk); // 64 MB without a newline
    const grown = process.memoryUsage().arrayBuffers - before;
    assert.ok(grown < 8 * 1024 * 1024, `${grown} bytes kept while skipping 64 MB`);
  });
});

describe("describeOversize", () => {
  const line = (text: string): OversizeLine => {
    const bytes = Buffer.from(text);
    return { bytes: bytes.length, limit: 10, head: bytes.subarray(0, HEAD_BYTES), tail: bytes.subarray(-TAIL_BYTES) };
  };
  const filler = "z".repeat(5000);

  test("a request's id and method from the start, or from the end where the MCP SDK puts them", () => {
    assert.deepEqual(describeOversize(line(`{"jsonrpc":"2.0","id":"a-1","method":"m","params":{"t":"${filler}"}}`)), {
      kind: "request",
      id: "a-1",
      method: "m",
    });
    assert.deepEqual(describeOversize(line(`{"method":"m","params":{"t":"${filler}"},"jsonrpc":"2.0","id":42}`)), {
      kind: "request",
      id: 42,
      method: "m",
    });
  });

  test("an id inside the params is not the request's; a notification has none", () => {
    const nested = line(`{"method":"m","params":{"t":"${filler}","id":5}}`);
    assert.deepEqual(describeOversize(nested), { kind: "request", method: "m" });
    assert.equal(oversizeError(nested, describeOversize(nested)), undefined);
    const quoted = line(`{"method":"m","params":{"t":"${filler}\\"id\\":5}"}}`);
    assert.equal(describeOversize(quoted).id, undefined);
  });

  test("a response is recognised, so the error stands in for it locally", () => {
    const response = line(`{"jsonrpc":"2.0","id":3,"result":{"content":"${filler}"}}`);
    const described = describeOversize(response);
    assert.deepEqual(described, { kind: "response", id: 3 });
    assert.match(oversizeError(response, described)?.error.message ?? "", /^Response too large/);
  });
});
