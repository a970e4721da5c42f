// Language-server diagnostics after an edit, through a real MCP client over stdio: `npm run bench -- lsp`.
// - first start: the first edit of a .ts (typescript-language-server) and of a .py file (pyright) in a fresh crow-mcp,
//   which starts the server and waits for its first answer;
// - warm: the round trip of `edit` on a small TypeScript project (a function and its caller), diagnostics on vs off
//   (CROW_LSP=off), measured in alternating slices so a busy machine weighs on both alike: a clean change, and a change
//   that breaks the caller or fixes it again (the result then lists the error, or says it is gone).
// The servers are the repository's dev dependencies (node_modules/.bin on PATH); the waits are long enough never to be
// cut short, so the figures are the servers' own.

import path from "node:path";
import { CROW_MCP_BIN, REPO_ROOT, type TempWorkspace, tempWorkspace } from "@crow/testkit";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { formatTiming, summarize, type Timing, writeReport } from "./lib.js";

const SLICES = 5;
const PER_SLICE = 20;
const FIRST_STARTS = 3;
const PATH_WITH_SERVERS = `${path.join(REPO_ROOT, "node_modules", ".bin")}${path.delimiter}${process.env.PATH}`;

async function connect(cwd: string, lsp: "on" | "off"): Promise<Client> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined) env[key] = value;
  Object.assign(env, { PATH: PATH_WITH_SERVERS, CROW_LSP: lsp, CROW_LSP_WAIT: "120", CROW_LSP_START_WAIT: "120" });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CROW_MCP_BIN],
    cwd,
    env,
    stderr: "ignore",
  });
  const client = new Client({ name: "crow-bench", version: "0.0.0" });
  await client.connect(transport);
  return client;
}

async function timed(
  client: Client,
  tool: string,
  args: Record<string, unknown>,
): Promise<{ ms: number; text: string }> {
  const start = process.hrtime.bigint();
  const result = (await client.callTool({ name: tool, arguments: args })) as CallToolResult;
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  const text = result.content.map((block) => (block.type === "text" ? block.text : "")).join("\n");
  if (result.isError) throw new Error(`${tool} failed: ${text}`);
  return { ms, text };
}

async function project(prefix: string): Promise<TempWorkspace> {
  const ws = await tempWorkspace(prefix);
  await ws.write(
    "tsconfig.json",
    JSON.stringify({
      compilerOptions: { strict: true, target: "es2022", module: "esnext", moduleResolution: "bundler" },
    }),
  );
  await ws.write("a.ts", "export function scale(x: number): number {\n  // v0\n  return x * 2;\n}\n");
  await ws.write("b.ts", 'import { scale } from "./a";\n\nexport const y = scale(1);\n');
  await ws.write("calc.py", "def double(x: int) -> int:\n    return x * 2\n\n\ntotal: int = double(2)\n");
  return ws;
}

/** The first edit of a .ts and a .py file in fresh crow-mcp processes: each starts its server. */
async function firstStarts(): Promise<Record<string, Timing>> {
  const samples: Record<string, number[]> = { typescript: [], python: [] };
  for (let i = 0; i < FIRST_STARTS; i++) {
    const ws = await project("crow-bench-lsp-first-");
    const client = await connect(ws.dir, "on");
    try {
      await timed(client, "read", { file_path: ws.path("b.ts") });
      samples.typescript?.push(
        (await timed(client, "edit", { file_path: ws.path("a.ts"), old_string: "// v0", new_string: "// v1" })).ms,
      );
      samples.python?.push(
        (await timed(client, "edit", { file_path: ws.path("calc.py"), old_string: "x * 2", new_string: "2 * x" })).ms,
      );
    } finally {
      await client.close();
      await ws.cleanup();
    }
  }
  return {
    "first start typescript": summarize(samples.typescript ?? []),
    "first start python": summarize(samples.python ?? []),
  };
}

/** Warm round trips, diagnostics on vs off, a clean change and a breaking/fixing one. */
async function warm(): Promise<Record<string, Timing>> {
  const sides = await Promise.all(
    (["on", "off"] as const).map(async (lsp) => {
      const ws = await project(`crow-bench-lsp-${lsp}-`);
      const client = await connect(ws.dir, lsp);
      return { lsp, ws, client, clean: [] as number[], breaking: [] as number[], version: 0, broken: false };
    }),
  );
  try {
    const clean = async (side: (typeof sides)[number]) => {
      const from = `// v${side.version}`;
      side.version++;
      return (
        await timed(side.client, "edit", {
          file_path: side.ws.path("a.ts"),
          old_string: from,
          new_string: `// v${side.version}`,
        })
      ).ms;
    };
    const breaking = async (side: (typeof sides)[number]) => {
      const [from, to] = side.broken
        ? ["x: number, y: number)", "x: number)"]
        : ["x: number)", "x: number, y: number)"];
      side.broken = !side.broken;
      const { ms, text } = await timed(side.client, "edit", {
        file_path: side.ws.path("a.ts"),
        old_string: from,
        new_string: to,
      });
      if (side.lsp === "on" && !text.includes("Diagnostics")) throw new Error(`no diagnostics in: ${text}`);
      return ms;
    };
    for (const side of sides) {
      await timed(side.client, "read", { file_path: side.ws.path("b.ts") });
      for (let i = 0; i < 4; i++) {
        await clean(side);
        await breaking(side);
      }
    }
    for (let slice = 0; slice < SLICES; slice++) {
      for (const side of sides) {
        for (let i = 0; i < PER_SLICE; i++) {
          side.clean.push(await clean(side));
          side.breaking.push(await breaking(side));
        }
      }
    }
  } finally {
    await Promise.all(
      sides.map(async (side) => {
        await side.client.close();
        await side.ws.cleanup();
      }),
    );
  }
  const results: Record<string, Timing> = {};
  for (const side of sides) {
    results[`edit clean, diagnostics ${side.lsp}`] = summarize(side.clean);
    results[`edit breaking/fixing, diagnostics ${side.lsp}`] = summarize(side.breaking);
  }
  return results;
}

export async function run(): Promise<void> {
  const results = { ...(await firstStarts()), ...(await warm()) };
  for (const [name, timing] of Object.entries(results)) console.log(`${name.padEnd(40)} ${formatTiming(timing)}`);
  writeReport("lsp", results);
}
