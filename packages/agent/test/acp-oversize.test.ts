/**
 * `crow acp` and a line over its 32 MB limit: the line is dropped, not the connection — stderr says what and why,
 * the request is answered with a JSON-RPC error naming the size and the limit, and the agent serves the next
 * request (it used to exit without a word).
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { textReply, useAcpFixture } from "@crow/testkit";

interface RpcLine {
  id?: number | string | null;
  error?: { code: number; message: string; data?: { bytes: number; limit: number } };
  result?: unknown;
}

const LIMIT = 32 * 1024 * 1024;

describe("crow acp: a message over the line limit is answered, not fatal", { timeout: 120_000 }, () => {
  const fx = useAcpFixture();

  test("a 33 MB prompt gets an error reply, stderr names the problem, the next prompt is answered", async () => {
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    const answer = fx.agent.waitForLine((line) => (JSON.parse(line) as RpcLine).id === 9100);
    const text = "x".repeat(33 * 1024 * 1024);
    fx.agent.writeRaw(
      JSON.stringify({
        jsonrpc: "2.0",
        id: 9100,
        method: "session/prompt",
        params: { sessionId, prompt: [{ type: "text", text }] },
      }),
    );
    const reply = JSON.parse(await answer) as RpcLine;
    assert.equal(reply.error?.code, -32600, JSON.stringify(reply));
    assert.match(reply.error?.message ?? "", new RegExp(`over the limit of ${LIMIT} bytes`));
    assert.ok((reply.error?.data?.bytes ?? 0) > LIMIT);
    assert.match(
      fx.agent.stderr(),
      /dropped a request session\/prompt \(id 9100\): the message is \d+ bytes \(33\.0 MB\), over the limit of 33554432 bytes/,
    );

    fx.mock.script(textReply("Still here."));
    const result = await fx.agent.prompt(sessionId, "are you there?");
    assert.equal(result.stopReason, "end_turn");
    fx.mock.assertDone();
  });
});
