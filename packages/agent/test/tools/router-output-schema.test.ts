// A server's tool that declares an output schema: its structured results are checked against it (the SDK's
// validation, with the JSON Schema validator Crow gives it, which loads Ajv only for such a tool).
import assert from "node:assert/strict";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { type TempWorkspace, tempWorkspace } from "@crow/testkit";
import { createToolRouter, type ToolRouter } from "../../src/tools/index.js";
import { run } from "./helpers.js";

const SERVER = path.join(import.meta.dirname, "..", "fixtures", "typed-mcp-server.mjs");

describe("a tool with an output schema", () => {
  let ws: TempWorkspace;
  let router: ToolRouter;
  before(async () => {
    ws = await tempWorkspace();
    router = await createToolRouter({
      cwd: ws.dir,
      builtin: false,
      configServers: { typed: { command: process.execPath, args: [SERVER] } },
    });
  });
  after(async () => {
    await router.close();
    await ws.cleanup();
  });

  test("a result that matches the schema comes through", async () => {
    assert.deepEqual(router.failures(), []);
    const result = await run(router, "measure", { word: "crow" });
    assert.equal(result.isError, undefined, result.text);
    assert.equal(result.text, '{"word":"crow","length":4}');
  });

  test("a result that breaks the schema is an error naming the field", async () => {
    const result = await run(router, "measure", { word: "crow", broken: true });
    assert.equal(result.isError, true);
    assert.match(result.text, /output schema/i);
    assert.match(result.text, /length must be number/);
  });
});
