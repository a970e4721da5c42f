/**
 * crow-mcp names its tools in three places besides the tools themselves: the server's MCP instructions, the first line
 * of `--help` and the package's description. They were hand-kept and could go stale silently (issue 51 item 4); now
 * the first two are made from the tool table (src/tools/list.ts). Checked here against what the real binary lists to
 * a client, so a tool added, renamed or dropped in one place and not the other fails.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { after, before, test } from "node:test";
import { CROW_MCP_BIN, connectStdio, type McpConnection, type TempWorkspace, tempWorkspace } from "@crow/testkit";

let ws: TempWorkspace;
let mcp: McpConnection;
/** The tools the running server lists, in its order. */
let listed: string[];

before(async () => {
  ws = await tempWorkspace();
  mcp = await connectStdio({ cwd: ws.dir });
  listed = (await mcp.client.listTools()).tools.map((tool) => tool.name);
});
after(async () => {
  await mcp.close();
  await ws.cleanup();
});

test("the server lists its tools (the comparisons below mean nothing against an empty list)", () => {
  assert.ok(listed.length >= 6, listed.join(", "));
});

test("the MCP instructions have one line per listed tool, in the listed order", () => {
  const instructions = mcp.client.getInstructions() ?? "";
  const named = [...instructions.matchAll(/^- ([a-z_]+): \S/gm)].map((m) => m[1]);
  assert.deepEqual(named, listed, instructions);
});

test("--help's first line names the listed tools, in the listed order", () => {
  const help = spawnSync(process.execPath, [CROW_MCP_BIN, "--help"], { encoding: "utf8" });
  assert.equal(help.status, 0, help.stderr);
  const first = help.stdout.split("\n")[0] ?? "";
  const names = /toolserver: ([a-z_, ]+)\.$/.exec(first)?.[1]?.split(", ");
  assert.deepEqual(names, listed, first);
});

test("the package description names the listed tools", () => {
  const manifest = JSON.parse(readFileSync(path.resolve(import.meta.dirname, "../package.json"), "utf8"));
  const names = /\(([a-z_, ]+)\)/.exec(manifest.description)?.[1]?.split(", ");
  assert.deepEqual([...(names ?? [])].sort(), [...listed].sort(), manifest.description);
});
