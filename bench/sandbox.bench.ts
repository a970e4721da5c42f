// The sandbox's cost, through a real MCP client over stdio: `npm run bench -- sandbox`. For crow-mcp unconfined and
// under bubblewrap (workspace-write, read-only): the shell's start (reset=true with a command: kill the shell, start
// a new one, run `true`) and the round trip of one command in a running shell. Needs bwrap.
import { spawnSync } from "node:child_process";
import { callTool, connectStdio, tempWorkspace } from "@crow/testkit";
import { formatTiming, measure, type Timing, writeReport } from "./lib.js";

const MODES = ["off", "workspace-write", "read-only"] as const;

export async function run(): Promise<void> {
  const ws = await tempWorkspace("crow-bench-sandbox-");
  const results: Record<string, { shellStart: Timing; roundTrip: Timing }> = {};
  try {
    for (const mode of MODES) {
      const mcp = await connectStdio({ cwd: ws.dir, args: ["--sandbox", mode] });
      try {
        const terminal = async (args: Record<string, unknown>) => {
          const result = await callTool(mcp.client, "terminal", args);
          if (!/exit code 0\]$/.test(result.text)) throw new Error(`unexpected result (${mode}): ${result.text}`);
        };
        const shellStart = await measure(() => terminal({ command: "true", reset: true }), 40, 3);
        const roundTrip = await measure(() => terminal({ command: "true" }), 300, 20);
        results[mode] = { shellStart, roundTrip };
        console.log(`${mode.padEnd(16)} shell start + true  ${formatTiming(shellStart)}`);
        console.log(`${mode.padEnd(16)} terminal "true"     ${formatTiming(roundTrip)}`);
      } finally {
        await mcp.close();
      }
    }
    // The bare process cost, without crow-mcp: bash alone vs bash inside bwrap with the read-only layout.
    const bare = await measure(() => spawnSync("bash", ["-c", "true"]), 60, 5);
    const boxed = await measure(
      () =>
        spawnSync("bwrap", [
          ...["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"],
          ...["--unshare-pid", "--unshare-ipc", "--unshare-net", "--die-with-parent", "bash", "-c", "true"],
        ]),
      60,
      5,
    );
    console.log(`spawn bash -c true             ${formatTiming(bare)}`);
    console.log(`spawn bwrap … bash -c true     ${formatTiming(boxed)}`);
    writeReport("sandbox", { ...results, spawnBash: bare, spawnBwrapBash: boxed });
  } finally {
    await ws.cleanup();
  }
}
