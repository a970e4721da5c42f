import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { callLocations, callTitle } from "@crow/core/internal";
import { fromMcpResult } from "../../src/tools/content.js";
import { firstChangedLine } from "../../src/tools/diff.js";
import { BUILTIN_SERVER, collectServers, fromAcp, fromConfig } from "../../src/tools/servers.js";

describe("MCP content → tool result", () => {
  test("text only becomes one string; isError is kept", () => {
    const result = fromMcpResult({
      content: [
        { type: "text", text: "a" },
        { type: "text", text: "b" },
      ],
      isError: true,
    });
    assert.deepEqual(result, { content: "a\nb", isError: true });
  });

  test("images become data-URL image parts next to the text", () => {
    const result = fromMcpResult({
      content: [
        { type: "text", text: "see" },
        { type: "image", data: "AAAA", mimeType: "image/png" },
      ],
    });
    assert.deepEqual(result.content, [
      { type: "text", text: "see" },
      { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } },
    ]);
  });

  test("resources and links are described in text; image blobs stay images", () => {
    const result = fromMcpResult({
      content: [
        { type: "resource", resource: { uri: "file:///a.txt", text: "hello" } },
        { type: "resource", resource: { uri: "file:///b.bin", blob: "AAAA", mimeType: "application/zip" } },
        { type: "resource", resource: { uri: "file:///c.png", blob: "AAAA", mimeType: "image/png" } },
        { type: "resource_link", uri: "https://x.test/doc", name: "doc", description: "the doc" },
        { type: "audio", data: "AAAA", mimeType: "audio/wav" },
      ],
    });
    assert.ok(Array.isArray(result.content));
    const texts = result.content.map((p) => (p.type === "text" ? p.text : p.type));
    assert.deepEqual(texts, [
      "[resource file:///a.txt]\nhello",
      "[binary resource file:///b.bin (application/zip, 3 bytes) not shown]",
      "image_url",
      "[resource link: doc https://x.test/doc — the doc]",
      "[audio (audio/wav, 3 bytes) not shown]",
    ]);
  });

  test("an empty result says so; structured content is used when there is no content", () => {
    assert.deepEqual(fromMcpResult({ content: [] }), { content: "(no output)" });
    assert.deepEqual(fromMcpResult({ content: [], structuredContent: { n: 1 } }), { content: '{"n":1}' });
  });
});

describe("server entries", () => {
  test("ACP entries: stdio inherits the environment plus its own; http/sse keep headers", () => {
    const stdio = fromAcp({ name: "s", command: "srv", args: ["-x"], env: [{ name: "K", value: "v" }] }, "/w");
    assert.equal(stdio.transport, "stdio");
    if (stdio.transport !== "stdio") return;
    assert.equal(stdio.env.K, "v");
    assert.equal(stdio.env.PATH, process.env.PATH);
    assert.equal(stdio.cwd, "/w");
    assert.deepEqual(
      fromAcp({ type: "sse", name: "e", url: "http://h/sse", headers: [{ name: "A", value: "b" }] }, "/w"),
      {
        name: "e",
        transport: "sse",
        url: "http://h/sse",
        headers: { A: "b" },
      },
    );
  });

  test("config entries: transport inferred from url/command, aliases, clear errors", () => {
    assert.equal(fromConfig("a", { url: "http://h/mcp" }, "/w").transport, "http");
    assert.equal(fromConfig("a", { transport: "streamable-http", url: "http://h/mcp" }, "/w").transport, "http");
    assert.equal(fromConfig("a", { type: "sse", url: "http://h/sse" }, "/w").transport, "sse");
    const stdio = fromConfig("a", { command: "x", cwd: "/elsewhere" }, "/w");
    assert.ok(stdio.transport === "stdio" && stdio.cwd === "/elsewhere");
    assert.deepEqual(fromConfig("a", { transport: "stdio" }, "/w"), {
      name: "a",
      transport: "invalid",
      error: "mcpServers.a: a stdio server needs a command",
    });
    assert.deepEqual(fromConfig("a", { transport: "http" }, "/w"), {
      name: "a",
      transport: "invalid",
      error: "mcpServers.a: transport http needs a url",
    });
    assert.equal(fromConfig("a", { url: "nope" }, "/w").transport, "invalid");
  });

  test("ACP entries win over config entries, which win over the built-in, by name", () => {
    const specs = collectServers({
      cwd: "/w",
      builtin: true,
      configServers: { [BUILTIN_SERVER]: { command: "custom-crow" }, x: { command: "from-config" } },
      mcpServers: [{ name: "x", command: "from-acp", args: [], env: [] }],
    });
    assert.deepEqual(
      specs.map((s) => [s.name, s.transport === "stdio" ? s.command : s.transport]),
      [
        [BUILTIN_SERVER, "custom-crow"],
        ["x", "from-acp"],
      ],
    );
    const builtin = collectServers({ cwd: "/w", builtin: true })[0];
    // The built-in is a session of the process's shared crow-mcp, in the session's directory.
    assert.deepEqual(builtin, { name: BUILTIN_SERVER, transport: "shared", cwd: "/w" });
  });
});

describe("data for the editor", () => {
  test("locations of file tools from their arguments", () => {
    assert.deepEqual(callLocations("read", { file_path: "/a", offset: 10 }), [{ path: "/a", line: 10 }]);
    assert.deepEqual(callLocations("crow-mcp_edit", { file_path: "/a" }), [{ path: "/a" }]);
    assert.deepEqual(callLocations("write", { file_path: "rel" }), []);
    assert.deepEqual(callLocations("terminal", { command: "ls" }), []);
  });

  test("titles", () => {
    assert.equal(callTitle("read", { file_path: "/a/b.ts" }), "read: /a/b.ts");
    assert.equal(callTitle("terminal", { command: "npm test\nmore" }), "terminal: npm test");
    assert.equal(callTitle("web_search", { query: "x" }), "web_search: x");
    assert.equal(callTitle("other", {}), "other");
  });

  test("first changed line", () => {
    assert.equal(firstChangedLine(null, "x"), 1);
    assert.equal(firstChangedLine("a\nb\nc\n", "a\nb\nC\n"), 3);
    assert.equal(firstChangedLine("a\nb\n", "a\nb\nc\n"), 3);
    assert.equal(firstChangedLine("same", "same"), 1);
  });
});
