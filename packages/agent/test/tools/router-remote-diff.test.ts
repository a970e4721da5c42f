// A write on a toolserver whose disk the agent does not share: the diff shown is the one the server returned,
// not one made by reading the agent's own disk (where the file does not exist).
import assert from "node:assert/strict";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { type TempWorkspace, tempWorkspace } from "@crow/testkit";
import { createToolRouter, type ToolRouter } from "../../src/tools/index.js";
import { run, toolCallData } from "./helpers.js";

const SERVER = path.join(import.meta.dirname, "..", "fixtures", "remote-write-mcp-server.mjs");

describe("a write on a remote toolserver", () => {
  let ws: TempWorkspace;
  let router: ToolRouter;
  before(async () => {
    ws = await tempWorkspace();
    router = await createToolRouter({
      cwd: ws.dir,
      builtin: false,
      configServers: { remote: { command: process.execPath, args: [SERVER] } },
    });
  });
  after(async () => {
    await router.close();
    await ws.cleanup();
  });

  test("shows the diff the server returned, located at the changed line", async () => {
    const file = "/srv/elsewhere/app.txt";
    const result = await run(router, "write", { file_path: file, content: "before\nafter\n" });
    assert.equal(result.isError, undefined, result.text);
    const data = toolCallData(result.display);
    assert.deepEqual(data?.content, [{ type: "diff", path: file, oldText: "before\n", newText: "before\nafter\n" }]);
    assert.deepEqual(data?.locations, [{ path: file, line: 2 }]);
  });

  test("proposes a write by the server's own dry run: its diff, nothing written", async () => {
    const file = "/srv/elsewhere/proposed.txt";
    const tool = router.resolve("write");
    const proposal = await tool?.propose?.(
      { file_path: file, content: "before\nproposed\n" },
      new AbortController().signal,
    );
    assert.deepEqual(proposal, {
      via: "remote",
      diff: { path: file, oldText: "before\n", newText: "before\nproposed\n" },
      locations: [{ path: file, line: 2 }],
    });
    const written = await run(router, "write", { file_path: file, content: "x" });
    assert.match(written.text, /\(write #2; 1 dry runs so far\)$/, "the dry run wrote nothing: the second real write");
  });
});
