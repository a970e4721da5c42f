import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import type { ContentBlock } from "@agentclientprotocol/sdk";
import { textReply, useAcpFixture } from "@crow/testkit";

/** The smallest valid PNG (1×1), the start of every image this server sends. */
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
  "base64",
);

/**
 * Image URLs on 127.0.0.1: /endless streams 40 MB of "PNG" without a Content-Length (it counts what it could send),
 * /slow sends the first bytes and then one byte a second for at most 60 s. `slowStarted` resolves when /slow is asked
 * for, `slowClosed` when its connection has gone.
 */
function startImageServer() {
  let sentEndless = 0;
  let slowStarted = () => {};
  let slowClosed = () => {};
  const started = new Promise<void>((resolve) => (slowStarted = resolve));
  const closed = new Promise<void>((resolve) => (slowClosed = resolve));
  const server = http.createServer((req, res) => {
    res.writeHead(200, { "content-type": "image/png" });
    if (req.url === "/endless") {
      const chunk = Buffer.alloc(1024 * 1024, 7);
      const pump = () => {
        while (sentEndless < 40 * chunk.length && !res.destroyed) {
          sentEndless += chunk.length;
          if (!res.write(chunk)) return void res.once("drain", pump);
        }
        if (!res.destroyed) res.end();
      };
      return pump();
    }
    res.write(PNG.subarray(0, 8));
    slowStarted();
    let seconds = 0;
    const timer = setInterval(() => (seconds++ < 60 && !res.destroyed ? res.write("x") : res.end()), 1000);
    res.once("close", () => {
      clearInterval(timer);
      slowClosed();
    });
  });
  return {
    sentEndless: () => sentEndless,
    slowStarted: started,
    slowClosed: closed,
    listen: () =>
      new Promise<string>((resolve) =>
        server.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
      ),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** What the model was sent as the last user message, as text. */
function lastUserMessage(request: { body: { messages: Array<{ role: string; content?: unknown }> } }): string {
  return JSON.stringify(request.body.messages.at(-1)?.content);
}

describe("crow acp: prompt content is read under the tools' rules", () => {
  const fx = useAcpFixture();
  const images = startImageServer();
  let base: string;
  before(async () => {
    base = await images.listen();
  });
  after(() => images.close());

  test("a resource link to /dev/zero or to a FIFO is refused as not a regular file, and the turn runs", {
    timeout: 60_000,
  }, async () => {
    const fifo = fx.ws.path("pipe");
    execFileSync("mkfifo", [fifo]);
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    let sent = "";
    fx.mock.script(textReply("Nothing to read.").expect((req) => (sent = lastUserMessage(req))));
    const blocks: ContentBlock[] = [
      { type: "text", text: "read these" },
      { type: "resource_link", uri: "file:///dev/zero", name: "zero" },
      { type: "resource_link", uri: `file://${fifo}`, name: "pipe" },
    ];
    assert.equal((await fx.agent.prompt(sessionId, blocks)).stopReason, "end_turn");
    assert.match(sent, /file:\/\/\/dev\/zero is a character device, not a regular file; not read/);
    assert.match(sent, /pipe is a named pipe \(FIFO\), not a regular file; not read/);
  });

  test("an image URI to a link-local address is refused by the fetch guard", async () => {
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    let sent = "";
    fx.mock.script(textReply("No image.").expect((req) => (sent = lastUserMessage(req))));
    const blocks: ContentBlock[] = [
      { type: "text", text: "what is this?" },
      { type: "image", data: "", mimeType: "image/png", uri: "http://169.254.169.254/latest/meta-data/" },
    ];
    assert.equal((await fx.agent.prompt(sessionId, blocks)).stopReason, "end_turn");
    assert.match(
      sent,
      /Refused to fetch http:\/\/169\.254\.169\.254\/latest\/meta-data\/: 169\.254\.169\.254 is a link-local address/,
    );
  });

  test("an image without a Content-Length is cut off while reading, at 10 MB, not buffered whole", async () => {
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    let sent = "";
    fx.mock.script(textReply("Too big.").expect((req) => (sent = lastUserMessage(req))));
    const blocks: ContentBlock[] = [
      { type: "text", text: "look" },
      { type: "image", data: "", mimeType: "image/png", uri: `${base}/endless` },
    ];
    assert.equal((await fx.agent.prompt(sessionId, blocks)).stopReason, "end_turn");
    assert.match(sent, /could not be fetched: The response is too large \(more than 10 MB/);
    assert.ok(images.sentEndless() < 30 * 1024 * 1024, `the server could send ${images.sentEndless()} of 40 MB`);
  });

  test("session/cancel during a slow image download ends the turn cancelled and stops the download", {
    timeout: 15_000,
  }, async () => {
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    const blocks: ContentBlock[] = [
      { type: "text", text: "look" },
      { type: "image", data: "", mimeType: "image/png", uri: `${base}/slow` },
    ];
    const asked = fx.mock.requests.length;
    const turn = fx.agent.prompt(sessionId, blocks);
    await images.slowStarted;
    await fx.agent.cancel(sessionId);
    assert.equal((await turn).stopReason, "cancelled");
    await images.slowClosed;
    assert.equal(fx.mock.requests.length, asked, "the model was never asked");
  });
});
