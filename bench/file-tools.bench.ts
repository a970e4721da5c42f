// The file tools' cost, through a real MCP client over stdio: `npm run bench -- file-tools`. One round trip of
// `read`, `write` (replace a file) and `edit` (one exact replacement) of a small source file in the workspace, with
// the sandbox off and under workspace-write (where the boundary is checked on open descriptors).
//
// To compare with another build (e.g. main's), point CROW_BENCH_MCP_BASELINE at its bundle/crow-mcp.js: both servers
// then run side by side and are measured in alternating slices, so a busy machine weighs on both alike.

import { CROW_MCP_BIN, tempWorkspace } from "@crow/testkit";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { formatTiming, summarize, type Timing, writeReport } from "./lib.js";

const MODES = ["off", "workspace-write"] as const;
const TOOLS = ["read", "write", "edit"] as const;
const BODY = Array.from({ length: 200 }, (_, i) => `export const value${i} = ${i};`).join("\n");
const SLICES = 6;
const PER_SLICE = 50;

async function connect(bin: string, cwd: string, mode: string): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [bin, "--sandbox", mode],
    cwd,
    stderr: "ignore",
  });
  const client = new Client({ name: "crow-bench", version: "0.0.0" });
  await client.connect(transport);
  return client;
}

export async function run(): Promise<void> {
  const ws = await tempWorkspace("crow-bench-file-tools-");
  const builds: Record<string, string> = { current: CROW_MCP_BIN };
  if (process.env.CROW_BENCH_MCP_BASELINE) builds.baseline = process.env.CROW_BENCH_MCP_BASELINE;
  const results: Record<string, Record<string, Timing>> = {};
  try {
    for (const mode of MODES) {
      const servers = await Promise.all(
        Object.entries(builds).map(async ([name, bin]) => {
          const file = await ws.write(`src/${name}-${mode}.ts`, `${BODY}\n`);
          const client = await connect(bin, ws.dir, mode);
          const samples: Record<string, number[]> = { read: [], write: [], edit: [] };
          let flip = false;
          const call = async (tool: (typeof TOOLS)[number]) => {
            let args: Record<string, unknown> = { file_path: file };
            if (tool === "write") args = { file_path: file, content: `${BODY}\n` };
            if (tool === "edit") {
              flip = !flip;
              const [from, to] = flip ? ["value7 = 7;", "value7 = 70;"] : ["value7 = 70;", "value7 = 7;"];
              args = { file_path: file, old_string: from, new_string: to };
            }
            const start = process.hrtime.bigint();
            const result = (await client.callTool({ name: tool, arguments: args })) as CallToolResult;
            const ms = Number(process.hrtime.bigint() - start) / 1e6;
            if (result.isError) throw new Error(`${tool} failed (${name}, ${mode}): ${JSON.stringify(result.content)}`);
            return ms;
          };
          return { name, client, samples, call };
        }),
      );
      try {
        for (const server of servers) for (const tool of TOOLS) for (let i = 0; i < 10; i++) await server.call(tool);
        for (let slice = 0; slice < SLICES; slice++) {
          for (const tool of TOOLS) {
            for (const server of servers) {
              for (let i = 0; i < PER_SLICE; i++) server.samples[tool]?.push(await server.call(tool));
            }
          }
        }
      } finally {
        await Promise.all(servers.map((s) => s.client.close()));
      }
      for (const server of servers) {
        const key = `${server.name} ${mode}`;
        results[key] = {};
        for (const tool of TOOLS) {
          const timing = summarize(server.samples[tool] ?? []);
          results[key][tool] = timing;
          console.log(`${key.padEnd(26)} ${tool.padEnd(6)} ${formatTiming(timing)}`);
        }
      }
    }
    writeReport("file-tools", results);
  } finally {
    await ws.cleanup();
  }
}
