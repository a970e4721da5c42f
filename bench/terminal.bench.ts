// Terminal tool speed through a real MCP client over stdio: `npm run bench -- terminal`.
// Round trip per command (target from issue 3: under 5 ms p50; upstream sleeps 0.5 s per poll, so >= 500 ms),
// the time to pass 50 MB of output through the PTY, parser and cap, and the toolserver's memory with one shell.
import { readFileSync } from "node:fs";
import { callTool, connectStdio, tempWorkspace } from "@crow/testkit";
import { formatTiming, measure, writeReport } from "./lib.js";

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? Number.NaN);
  return Math.round((kb / 1024) * 10) / 10;
}

export async function run(): Promise<void> {
  const ws = await tempWorkspace("crow-bench-terminal-");
  const mcp = await connectStdio({ cwd: ws.dir });
  try {
    const pid = mcp.pid;
    if (pid === undefined) throw new Error("no server pid");
    const rssIdle = rssMb(pid);
    const terminal = async (command: string) => {
      const result = await callTool(mcp.client, "terminal", { command });
      if (!/exit code 0\]$/.test(result.text)) throw new Error(`unexpected result for ${command}: ${result.text}`);
      return result;
    };
    const start = process.hrtime.bigint();
    await terminal("true");
    const firstCallMs = Number(process.hrtime.bigint() - start) / 1e6;

    const trueTiming = await measure(() => terminal("true"), 300, 20);
    const echoTiming = await measure(() => terminal("echo hi"), 300, 20);
    const rssOneShell = rssMb(pid);
    console.log(`first call (starts bash)   ${firstCallMs.toFixed(1)} ms`);
    console.log(`terminal "true"            ${formatTiming(trueTiming)}`);
    console.log(`terminal "echo hi"         ${formatTiming(echoTiming)}`);

    let returned = 0;
    const bigTiming = await measure(
      async () => {
        returned = (await terminal("yes | head -c 50M")).text.length;
      },
      5,
      1,
    );
    const mbPerSecond = 50 / (bigTiming.p50 / 1000);
    const rssAfterBig = rssMb(pid);
    console.log(
      `50 MB of output            ${formatTiming(bigTiming)}  (${mbPerSecond.toFixed(0)} MB/s; ${returned} chars returned)`,
    );
    console.log(
      `server RSS                 ${rssIdle} MB before the shell, ${rssOneShell} MB with one shell, ${rssAfterBig} MB after the 50 MB runs`,
    );
    writeReport("terminal", {
      firstCallMs,
      true: trueTiming,
      echoHi: echoTiming,
      output50MB: { ...bigTiming, mbPerSecond, returnedChars: returned },
      rssMb: { beforeShell: rssIdle, oneShell: rssOneShell, after50MB: rssAfterBig },
    });
  } finally {
    await mcp.close();
    await ws.cleanup();
  }
}
