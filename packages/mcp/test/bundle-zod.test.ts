/**
 * crow-mcp's bundle (what `crow` spawns) carries Zod 4 only: the MCP SDK's Zod 3 support (zod/v3 and its JSON Schema
 * converter, ~95 kB parsed at every start) is left out by scripts/bundle-options.mjs, and the tools, all Zod 4, are
 * listed with their JSON Schemas as before.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { CROW_MCP_BIN, connectStdio, type McpConnection, type TempWorkspace, tempWorkspace } from "@crow/testkit";

describe("crow-mcp's bundle: Zod 4 only", () => {
  let ws: TempWorkspace;
  let mcp: McpConnection;

  before(async () => {
    ws = await tempWorkspace("crow-zod4-");
    mcp = await connectStdio({ cwd: ws.dir });
  });
  after(async () => {
    await mcp.close();
    await ws.cleanup();
  });

  test("no chunk of the bundle holds Zod 3's parser", () => {
    const dir = path.dirname(CROW_MCP_BIN);
    const withZod3 = readdirSync(dir)
      .filter((file) => file.endsWith(".js"))
      // `_processInputParams` is a method of Zod 3's ZodType; Zod 4 has none of that name.
      .filter((file) => readFileSync(path.join(dir, file), "utf8").includes("_processInputParams"));
    assert.deepEqual(withZod3, []);
  });

  test("tools/list still gives every tool its JSON Schema", async () => {
    const { tools } = await mcp.client.listTools();
    const read = tools.find((tool) => tool.name === "read");
    assert.ok(read, "read is listed");
    assert.equal(read.inputSchema.type, "object");
    assert.ok(read.inputSchema.properties && "file_path" in read.inputSchema.properties);
    assert.deepEqual(read.inputSchema.required, ["file_path"]);
  });
});
