import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { pathToFileURL } from "node:url";
import { type TempWorkspace, tempWorkspace } from "@crow/testkit";
import { lineRange, PromptContentError, promptContent, singleText } from "../src/acp/prompt-content.js";

describe("prompt content: ACP blocks → user message", () => {
  let ws: TempWorkspace;
  before(async () => {
    ws = await tempWorkspace();
    await ws.write("src/a.ts", "one\ntwo\nthree\nfour\n");
    await ws.write("src/b.ts", "b\n");
  });
  after(() => ws.cleanup());

  test("plain text blocks become one string; empty ones are dropped", async () => {
    const content = await promptContent(
      [
        { type: "text", text: "fix" },
        { type: "text", text: "  " },
        { type: "text", text: "it" },
      ],
      ws.dir,
    );
    assert.equal(content, "fix\n\nit");
  });

  test("a resource link to a file inlines it, with a line range", async () => {
    const uri = `${pathToFileURL(ws.path("src/a.ts")).href}#L2:3`;
    const content = await promptContent([{ type: "resource_link", uri, name: "a.ts" }], ws.dir);
    assert.equal(typeof content, "string");
    assert.match(String(content), /lines 2-3/);
    assert.match(String(content), /two\nthree/);
    assert.doesNotMatch(String(content), /four/);
  });

  test("a resource link to a directory becomes a listing, not a crash", async () => {
    const uri = pathToFileURL(ws.path("src")).href;
    const content = await promptContent([{ type: "resource_link", uri, name: "src" }], ws.dir);
    assert.match(String(content), /a\.ts\nb\.ts/);
  });

  test("a missing file is reported to the model", async () => {
    const uri = pathToFileURL(ws.path("nope.ts")).href;
    assert.match(String(await promptContent([{ type: "resource_link", uri, name: "x" }], ws.dir)), /could not be read/);
  });

  test("embedded text resources and images", async () => {
    const content = await promptContent(
      [
        { type: "text", text: "look" },
        { type: "resource", resource: { uri: "file:///x.md", text: "# X" } },
        { type: "image", data: "AAAA", mimeType: "image/png" },
      ],
      ws.dir,
    );
    assert.deepEqual(content, [
      { type: "text", text: "look" },
      { type: "text", text: "file_location: file:///x.md\n# X" },
      { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } },
    ]);
  });

  test("audio is refused with a clear message", async () => {
    await assert.rejects(
      promptContent([{ type: "audio", data: "AAAA", mimeType: "audio/wav" }], ws.dir),
      PromptContentError,
    );
  });

  test("line ranges", () => {
    assert.deepEqual(lineRange("file:///a#L10:20"), { base: "file:///a", start: 10, end: 20 });
    assert.deepEqual(lineRange("file:///a#L10-L20"), { base: "file:///a", start: 10, end: 20 });
    assert.deepEqual(lineRange("file:///a#L7"), { base: "file:///a", start: 7 });
    assert.deepEqual(lineRange("file:///a"), { base: "file:///a" });
  });

  test("slash commands are only single text blocks", () => {
    assert.equal(singleText([{ type: "text", text: "/help" }]), "/help");
    assert.equal(
      singleText([
        { type: "text", text: "/help" },
        { type: "text", text: "x" },
      ]),
      undefined,
    );
  });
});
