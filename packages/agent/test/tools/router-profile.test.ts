// A tool's profile (tools/builtin): adding one is a profile object plus one registration line, and the router then
// gives the tool its kind, its title and locations before it runs, and its result's display, with no name compared
// anywhere else. Shown with a small third-party tool (`measure`); crow-mcp's tools are registered the same way.
import assert from "node:assert/strict";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { type TempWorkspace, tempWorkspace } from "@crow/testkit";
import { createToolRouter, type ToolProfile, type ToolRouter, toolProfile } from "../../src/tools/index.js";
import { run } from "./helpers.js";

const SERVER = path.join(import.meta.dirname, "..", "fixtures", "typed-mcp-server.mjs");

/** The new tool's profile: what a file tools/builtin/measure.ts would hold. */
const measure: ToolProfile = {
  kind: "search",
  display: (name, args) => ({ title: `${name} “${String(args.word)}”`, locations: [{ path: `/words/${args.word}` }] }),
  resultDisplay: (args, _meta, failed) => (failed ? {} : { locations: [{ path: `/words/${args.word}`, line: 1 }] }),
};

describe("a tool's profile", () => {
  let ws: TempWorkspace;
  let plain: ToolRouter;
  let profiled: ToolRouter;
  before(async () => {
    ws = await tempWorkspace();
    const configServers = { typed: { command: process.execPath, args: [SERVER] } };
    plain = await createToolRouter({ cwd: ws.dir, builtin: false, configServers });
    // The one registration line.
    profiled = await createToolRouter({
      cwd: ws.dir,
      builtin: false,
      configServers,
      profiles: new Map([["measure", measure]]),
    });
  });
  after(async () => {
    await plain.close();
    await profiled.close();
    await ws.cleanup();
  });

  test("without one, a tool gets the generic profile: kind from its name, its name as title", async () => {
    const tool = plain.resolve("measure");
    assert.equal(tool?.kind, "other");
    assert.deepEqual(tool?.display({ word: "crow" }), { title: "measure" });
    const result = await run(plain, "measure", { word: "crow" });
    assert.deepEqual(result.display, { via: "typed" });
  });

  test("with one, its kind, its display before the call and its result's display come from the profile", async () => {
    const tool = profiled.resolve("measure");
    assert.equal(tool?.kind, "search");
    assert.deepEqual(tool?.display({ word: "crow" }), {
      title: "measure “crow”",
      locations: [{ path: "/words/crow" }],
    });
    const result = await run(profiled, "measure", { word: "crow" });
    assert.equal(result.text, '{"word":"crow","length":4}');
    assert.deepEqual(result.display, { via: "typed", locations: [{ path: "/words/crow", line: 1 }] });
    // A server-prefixed name reaches the same profile.
    assert.equal(toolProfile("typed_measure", new Map([["measure", measure]])), measure);
  });

  test("crow-mcp's tools are found by their name on the server or as a model prefixed it", () => {
    assert.equal(toolProfile("crow-mcp_edit").kind, "edit");
    assert.equal(toolProfile("mcp__crow__read").kind, "read");
    assert.equal(toolProfile("terminal").kind, "execute");
    assert.equal(toolProfile("web_search").kind, "search");
    assert.equal(toolProfile("web_fetch").kind, "fetch");
    assert.equal(toolProfile("write").change?.fromArgs({ file_path: "a.txt", content: "x" }, "/w")?.path, "/w/a.txt");
    assert.equal(toolProfile("other_tool").kind, "other");
    assert.equal(toolProfile("other_tool").change, undefined);
  });
});
