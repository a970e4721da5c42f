import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { httpError, type MockLlm, startMockLlm, type TempWorkspace, tempWorkspace, useAcpFixture } from "@crow/testkit";
import { listModels } from "../src/config/list-models.js";
import { runCrow, runEnv, tempHome } from "./run-helpers.js";

const KEY = "sk-test-4f1c9e0b7d2a6e58";
/** A provider that echoes the key it was sent, as some do in a 401. */
const echoingKey = () => httpError(401, { message: `Incorrect API key provided: ${KEY}. Find your key at …` });

describe("a provider echoing the API key in an error body: the key is never shown", { timeout: 120_000 }, () => {
  describe("crow run", () => {
    let mock: MockLlm;
    let ws: TempWorkspace;
    let home: { dir: string; cleanup: () => Promise<void> };
    before(async () => {
      mock = await startMockLlm();
      ws = await tempWorkspace();
      home = await tempHome();
    });
    after(async () => {
      await mock.close();
      await ws.cleanup();
      await home.cleanup();
    });

    test("stderr says the key was rejected, with the key replaced", async () => {
      mock.script(echoingKey());
      const run = await runCrow(["hello"], { env: runEnv(mock.url, home.dir, { OPENAI_API_KEY: KEY }), cwd: ws.dir });
      assert.notEqual(run.code, 0);
      assert.match(run.stderr, /rejected the API key/);
      assert.match(run.stderr, /Incorrect API key provided: \[redacted\]/);
      assert.ok(!run.stderr.includes(KEY) && !run.stdout.includes(KEY), run.stderr);
      mock.assertDone();
    });
  });

  describe("crow acp", () => {
    const fx = useAcpFixture({ agent: { env: { OPENAI_API_KEY: KEY } } });

    test("the JSON-RPC error of the prompt has the key replaced", async () => {
      const { sessionId } = await fx.agent.newSession(fx.ws.dir);
      fx.mock.script(echoingKey());
      await assert.rejects(fx.agent.prompt(sessionId, "hello"), (error: { message?: string }) => {
        assert.match(error.message ?? "", /Incorrect API key provided: \[redacted\]/);
        assert.ok(!JSON.stringify(error).includes(KEY), JSON.stringify(error));
        return true;
      });
      fx.mock.assertDone();
    });
  });

  test("crow init's GET /models failure has the key replaced", async () => {
    const server = createServer((_req, res) => {
      res.writeHead(401, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: `Incorrect API key provided: ${KEY}` } }));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const list = await listModels(`http://127.0.0.1:${port}/v1`, KEY);
      assert.ok(!list.ok);
      assert.match(list.error, /HTTP 401: Incorrect API key provided: \[redacted\]$/);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
