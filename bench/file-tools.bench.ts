// The file tools' cost, through a real MCP client over stdio: `npm run bench -- file-tools`. One round trip of
// `read`, `write` (replace a file) and `edit` (one exact replacement) of a small source file in the workspace, with
// the sandbox off and under workspace-write (where the boundary is checked on open descriptors).
import { callTool, connectStdio, tempWorkspace } from "@crow/testkit";
import { formatTiming, measure, type Timing, writeReport } from "./lib.js";

const MODES = ["off", "workspace-write"] as const;
const BODY = Array.from({ length: 200 }, (_, i) => `export const value${i} = ${i};`).join("\n");

export async function run(): Promise<void> {
  const ws = await tempWorkspace("crow-bench-file-tools-");
  const results: Record<string, Record<string, Timing>> = {};
  try {
    for (const mode of MODES) {
      const mcp = await connectStdio({ cwd: ws.dir, args: ["--sandbox", mode] });
      try {
        const file = await ws.write(`src/${mode}.ts`, `${BODY}\n`);
        const call = async (tool: string, args: Record<string, unknown>) => {
          const result = await callTool(mcp.client, tool, args);
          if (result.isError) throw new Error(`${tool} failed (${mode}): ${result.text}`);
        };
        let flip = false;
        const read = await measure(() => call("read", { file_path: file }), 300, 20);
        const write = await measure(() => call("write", { file_path: file, content: `${BODY}\n` }), 300, 20);
        const edit = await measure(
          () => {
            flip = !flip;
            const [from, to] = flip ? ["value7 = 7;", "value7 = 70;"] : ["value7 = 70;", "value7 = 7;"];
            return call("edit", { file_path: file, old_string: from, new_string: to });
          },
          300,
          20,
        );
        results[mode] = { read, write, edit };
        for (const [tool, timing] of Object.entries(results[mode])) {
          console.log(`${mode.padEnd(16)} ${tool.padEnd(6)} ${formatTiming(timing)}`);
        }
      } finally {
        await mcp.close();
      }
    }
    writeReport("file-tools", results);
  } finally {
    await ws.cleanup();
  }
}
