// A fresh shared crow-mcp as the agent starts it (`--socket`, `--exit-with-stdin`, `--v8-pool-size=1`):
// `npm run bench -- mcp-cold`. Per start: spawn → "listening", then (after an idle pause, as when the agent is still
// loading, or at once) the first session's initialize, tools/list, 10 `read` rounds, 3 `terminal` rounds, and the
// toolserver's CPU per round (all threads), against 40 more `read` rounds once warm. Messages are raw lines on the
// socket (what the agent's transport sends), so the numbers are the toolserver's, not a client's cold code.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { CROW_MCP_BIN, connectSocket, type SocketAnswer, socketInitialize, tempWorkspace } from "@crow/testkit";
import { writeReport } from "./lib.js";
import { threadsCpuMs } from "./proc.js";

const RUNS = 8;

/** Fails on an error answer or a tool error. */
function checked(answer: SocketAnswer): SocketAnswer {
  if (answer.error || answer.result?.isError) throw new Error(JSON.stringify(answer));
  return answer;
}

interface Start {
  listeningMs: number;
  initializeMs: number;
  toolsListMs: number;
  initListCpuMs: number;
  firstReadMs: number;
  readCpuFirst10Ms: number;
  firstTerminalMs: number;
  terminalCpuFirst3Ms: number;
  readCpuWarmMs: number;
}

async function oneStart(cwd: string, file: string, idleMs: number, cacheHome: string): Promise<Start> {
  const dir = mkdtempSync(path.join(tmpdir(), "crow-mcp-"));
  const socketPath = path.join(dir, "mcp.sock");
  const t0 = performance.now();
  const child = spawn(
    process.execPath,
    ["--v8-pool-size=1", CROW_MCP_BIN, "--socket", socketPath, "--exit-with-stdin"],
    { cwd, env: { ...process.env, HOME: dir, XDG_CACHE_HOME: cacheHome }, stdio: ["pipe", "ignore", "pipe"] },
  );
  const pid = child.pid ?? 0;
  try {
    let stderr = "";
    await new Promise<void>((resolve, reject) => {
      child.stderr?.on("data", (chunk: Buffer) => {
        stderr += chunk.toString();
        if (stderr.includes("listening on unix:")) resolve();
      });
      child.once("exit", () => reject(new Error(`crow-mcp exited: ${stderr}`)));
    });
    const listeningMs = performance.now() - t0;
    if (idleMs > 0) await new Promise((resolve) => setTimeout(resolve, idleMs));
    const timed = async (fn: () => Promise<unknown>) => {
      const start = performance.now();
      await fn();
      return performance.now() - start;
    };
    let cpu = threadsCpuMs(pid);
    const session = await connectSocket(socketPath);
    const initializeMs = await timed(async () => checked(await session.request(socketInitialize(cwd))));
    session.notify({ method: "notifications/initialized" });
    const toolsListMs = await timed(async () => checked(await session.request({ id: 2, method: "tools/list" })));
    const initListCpuMs = threadsCpuMs(pid) - cpu;
    let id = 3;
    const call = async (name: string, args: object) =>
      checked(await session.request({ id: id++, method: "tools/call", params: { name, arguments: args } }));
    const reads = async (n: number) => {
      const before = threadsCpuMs(pid);
      const first = await timed(() => call("read", { file_path: file, limit: 20 }));
      for (let i = 1; i < n; i++) await call("read", { file_path: file, offset: i + 1, limit: 20 });
      return { first, cpu: (threadsCpuMs(pid) - before) / n };
    };
    const first10 = await reads(10);
    cpu = threadsCpuMs(pid);
    const firstTerminalMs = await timed(() => call("terminal", { command: "echo 1" }));
    await call("terminal", { command: "echo 2" });
    await call("terminal", { command: "echo 3" });
    const terminalCpuFirst3Ms = (threadsCpuMs(pid) - cpu) / 3;
    const warm = await reads(40);
    session.close();
    return {
      listeningMs,
      initializeMs,
      toolsListMs,
      initListCpuMs,
      firstReadMs: first10.first,
      readCpuFirst10Ms: first10.cpu,
      firstTerminalMs,
      terminalCpuFirst3Ms,
      readCpuWarmMs: warm.cpu,
    };
  } finally {
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.stdin?.end();
    await exited;
    rmSync(dir, { recursive: true, force: true });
  }
}

function median(starts: Start[], key: keyof Start): number {
  const sorted = starts.map((s) => s[key]).sort((a, b) => a - b);
  return Math.round((sorted[Math.floor(sorted.length / 2)] ?? Number.NaN) * 10) / 10;
}

export async function run(): Promise<void> {
  const ws = await tempWorkspace("crow-bench-mcp-cold-");
  try {
    const file = ws.path("sample.txt");
    writeFileSync(file, Array.from({ length: 200 }, (_, i) => `line ${i + 1} of the sample file`).join("\n"));
    // One compile cache for all starts (Node >= 22), as a user has; the first start fills it, and this process's own
    // http client compiles there too, not in the first measured start.
    const cacheHome = ws.path("cache");
    await oneStart(ws.dir, file, 0, cacheHome);
    const results: Record<string, Record<string, number>> = {};
    for (const [name, idleMs] of [
      ["after 300 ms idle", 300],
      ["at once", 0],
    ] as const) {
      const starts: Start[] = [];
      for (let i = 0; i < RUNS; i++) starts.push(await oneStart(ws.dir, file, idleMs, cacheHome));
      const keys = Object.keys(starts[0] ?? {}) as Array<keyof Start>;
      results[name] = Object.fromEntries(keys.map((key) => [key, median(starts, key)]));
      console.log(`first session ${name} (p50 of ${RUNS} starts, ms):`);
      for (const key of keys) console.log(`  ${key.padEnd(22)} ${median(starts, key)}`);
    }
    console.log(
      `Node ${process.version}; NODE_EXTRA_CA_CERTS ${process.env.NODE_EXTRA_CA_CERTS ? "is set (Node 20 reads it at every start, 22 and later when first needed)" : "is not set"}`,
    );
    writeReport("mcp-cold", { runs: RUNS, extraCaCerts: Boolean(process.env.NODE_EXTRA_CA_CERTS), ...results });
  } finally {
    await ws.cleanup();
  }
}
