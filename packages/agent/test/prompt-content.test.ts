import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { pathToFileURL } from "node:url";
import type { ContentPart } from "@crow/core";
import { type TempWorkspace, tempWorkspace } from "@crow/testkit";
import { lineRange, PromptContentError, promptContent, singleText } from "../src/acp/prompt-content.js";

/** The smallest valid PNG (1×1, transparent). */
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
  "base64",
);
const PNG_URL = `data:image/png;base64,${PNG.toString("base64")}`;

function parts(content: string | ContentPart[]): ContentPart[] {
  assert.ok(Array.isArray(content), `expected content parts, got ${JSON.stringify(content)}`);
  return content;
}

describe("prompt content: ACP blocks → user message", () => {
  let ws: TempWorkspace;
  before(async () => {
    ws = await tempWorkspace();
    await ws.write("src/a.ts", "one\ntwo\nthree\nfour\n");
    await ws.write("src/b.ts", "b\n");
    await ws.write("img/dot.png", PNG);
    await ws.write("bin/blob.dat", Buffer.from([1, 2, 0, 3, 4]));
    await ws.write("empty/.keep", "");
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

  test("a resource link to a file inlines it numbered like the read tool, with a line range", async () => {
    const uri = `${pathToFileURL(ws.path("src/a.ts")).href}#L2:3`;
    const content = await promptContent([{ type: "resource_link", uri, name: "a.ts" }], ws.dir);
    assert.equal(content, `File ${ws.path("src/a.ts")} (lines 2-3):\n2\ttwo\n3\tthree`);
  });

  test("a range with only a start runs to the end; a whole file is inlined as it is, as a whole-file read", async () => {
    const from = await promptContent(
      [{ type: "resource_link", uri: `${pathToFileURL(ws.path("src/a.ts")).href}#L3`, name: "a.ts" }],
      ws.dir,
    );
    assert.match(String(from), /\(from line 3\):\n3\tthree\n4\tfour$/);
    const whole = await promptContent([{ type: "resource_link", uri: "src/a.ts", name: "a.ts" }], ws.dir);
    assert.equal(whole, `File ${ws.path("src/a.ts")}:\none\ntwo\nthree\nfour`);
  });

  test("a resource link to a directory becomes a listing, not a crash", async () => {
    const uri = pathToFileURL(ws.dir).href;
    const content = String(await promptContent([{ type: "resource_link", uri, name: "ws" }], ws.dir));
    assert.match(content, /^Directory .* \(\d+ entries\):/);
    assert.match(content, /\nbin\/\nempty\/\nimg\/\nsrc\//);
    const empty = await promptContent([{ type: "resource_link", uri: "bin", name: "bin" }], ws.dir);
    assert.match(String(empty), /blob\.dat/);
  });

  test("a resource link to an image file becomes an image; a binary file is noted, not inlined", async () => {
    const content = parts(
      await promptContent(
        [
          { type: "resource_link", uri: pathToFileURL(ws.path("img/dot.png")).href, name: "dot.png" },
          { type: "resource_link", uri: "bin/blob.dat", name: "blob.dat" },
        ],
        ws.dir,
      ),
    );
    assert.deepEqual(content[0], { type: "image_url", image_url: { url: PNG_URL } });
    assert.equal(content[1]?.type, "text");
    assert.match((content[1] as { text: string }).text, /is binary \(5 bytes\); not inlined/);
  });

  test("a missing file is reported to the model", async () => {
    const uri = pathToFileURL(ws.path("nope.ts")).href;
    assert.match(String(await promptContent([{ type: "resource_link", uri, name: "x" }], ws.dir)), /could not be read/);
  });

  test("a link that is not a local file stays a link", async () => {
    const content = await promptContent([{ type: "resource_link", uri: "https://example.com/x", name: "x" }], ws.dir);
    assert.equal(content, "[Resource: x](https://example.com/x)");
  });

  test("embedded text resources, image blobs, and other blobs", async () => {
    const content = await promptContent(
      [
        { type: "text", text: "look" },
        { type: "resource", resource: { uri: "file:///x.md", text: "# X" } },
        { type: "image", data: "AAAA", mimeType: "image/png" },
        { type: "resource", resource: { uri: "file:///p.png", blob: "BBBB", mimeType: "image/png" } },
        { type: "resource", resource: { uri: "file:///z.zip", blob: "CCCC", mimeType: "application/zip" } },
      ],
      ws.dir,
    );
    assert.deepEqual(content, [
      { type: "text", text: "look" },
      { type: "text", text: "file_location: file:///x.md\n# X" },
      { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } },
      { type: "image_url", image_url: { url: "data:image/png;base64,BBBB" } },
      { type: "text", text: "[Binary resource file:///z.zip (application/zip) omitted]" },
    ]);
  });

  test("an image given by file:// URI or relative path is read into a data URL", async () => {
    const content = parts(
      await promptContent(
        [
          { type: "image", data: "", mimeType: "image/png", uri: pathToFileURL(ws.path("img/dot.png")).href },
          { type: "image", data: "", mimeType: "image/png", uri: "img/dot.png" },
          { type: "image", data: "", mimeType: "image/png", uri: "img/missing.png" },
        ],
        ws.dir,
      ),
    );
    assert.deepEqual(content.slice(0, 2), [
      { type: "image_url", image_url: { url: PNG_URL } },
      { type: "image_url", image_url: { url: PNG_URL } },
    ]);
    assert.match((content[2] as { text: string }).text, /Image img\/missing\.png could not be read/);
  });

  describe("images by http(s) URL", () => {
    let server: Server;
    let base: string;
    before(async () => {
      server = createServer((req, res) => {
        if (req.url === "/dot") {
          res.writeHead(200, { "content-type": "image/png" }).end(PNG);
        } else if (req.url === "/page") {
          res.writeHead(200, { "content-type": "text/html" }).end("<html></html>");
        } else {
          res.writeHead(404).end();
        }
      });
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    after(() => new Promise<void>((resolve) => server.close(() => resolve())));

    test("are fetched and sent as data URLs with the served content type", async () => {
      const content = parts(
        await promptContent([{ type: "image", data: "", mimeType: "", uri: `${base}/dot` }], ws.dir),
      );
      assert.deepEqual(content, [{ type: "image_url", image_url: { url: PNG_URL } }]);
    });

    test("a failed download or a page that is not an image is told to the model", async () => {
      const content = await promptContent(
        [
          { type: "image", data: "", mimeType: "image/png", uri: `${base}/gone.png` },
          { type: "image", data: "", mimeType: "", uri: `${base}/page` },
        ],
        ws.dir,
      );
      assert.equal(
        content,
        `[Image ${base}/gone.png could not be fetched: HTTP 404]\n\n[${base}/page is not an image (content type text/html); not sent]`,
      );
    });
  });

  test("audio is refused with a message naming the model when it cannot take audio", async () => {
    await assert.rejects(
      promptContent([{ type: "audio", data: "AAAA", mimeType: "audio/wav" }], ws.dir, { model: "gpt-text" }),
      (error: unknown) =>
        error instanceof PromptContentError &&
        error.message === 'The model "gpt-text" does not accept audio input; send text (e.g. a transcript) instead.',
    );
  });

  test("audio goes through as input_audio when the model takes it (WAV and MP3 only)", async () => {
    const content = await promptContent([{ type: "audio", data: "AAAA", mimeType: "audio/mpeg" }], ws.dir, {
      audio: true,
    });
    assert.deepEqual(content, [{ type: "input_audio", input_audio: { data: "AAAA", format: "mp3" } }]);
    await assert.rejects(
      promptContent([{ type: "audio", data: "AAAA", mimeType: "audio/ogg" }], ws.dir, { audio: true }),
      /Audio of type audio\/ogg is not supported; send WAV or MP3\./,
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
