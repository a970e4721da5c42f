import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { test } from "node:test";
import { promisify } from "node:util";

const FIXTURE = path.join(import.meta.dirname, "fixtures", "gc-embed.ts");

test("the embeddings request times out though gc() runs while the endpoint drips its answer", async () => {
  // Answers at once, then drips a space every 100 ms for 8 s before a valid answer (bounded: a request whose
  // deadline never fires still ends).
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.write('{"data": [');
    let sent = 0;
    const timer = setInterval(() => {
      if (res.destroyed || sent++ >= 80) {
        clearInterval(timer);
        res.end('{"index": 0, "embedding": [1, 0]}]}');
        return;
      }
      res.write(" ");
    }, 100);
    res.once("close", () => clearInterval(timer));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    const { port } = server.address() as AddressInfo;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ["--expose-gc", "--import", "tsx", "--conditions=@crow/source", FIXTURE, `http://127.0.0.1:${port}/v1`, "1000"],
      { cwd: import.meta.dirname },
    );
    const { text } = JSON.parse(stdout.trim()) as { text: string };
    assert.match(
      text,
      /embeddings request to http:\/\/127\.0\.0\.1:\d+\/v1\/embeddings failed: no complete answer within 1 s/,
    );
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});
