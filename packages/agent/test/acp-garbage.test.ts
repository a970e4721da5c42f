import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { textReply, useAcpFixture } from "@crow/testkit";

interface RpcLine {
  id?: number | string | null;
  error?: { code: number; message: string };
  result?: unknown;
}

describe("crow acp: garbage on stdin gets JSON-RPC errors and the agent keeps running", () => {
  const fx = useAcpFixture();

  /** Writes a raw line and returns the agent's answer to the given id. */
  async function raw(line: string, id: number | null): Promise<RpcLine> {
    const answer = fx.agent.waitForLine((l) => {
      try {
        const parsed = JSON.parse(l) as RpcLine;
        return parsed.id === id && (parsed.error !== undefined || parsed.result !== undefined);
      } catch {
        return false;
      }
    });
    fx.agent.writeRaw(line);
    return JSON.parse(await answer) as RpcLine;
  }

  test("invalid JSON → parse error", async () => {
    const answer = await raw("{this is not json", null);
    assert.equal(answer.error?.code, -32700);
  });

  test("an unknown method → method not found", async () => {
    const answer = await raw(
      JSON.stringify({ jsonrpc: "2.0", id: 9001, method: "session/teleport", params: {} }),
      9001,
    );
    assert.equal(answer.error?.code, -32601);
  });

  test("an unknown extension method → method not found", async () => {
    const answer = await raw(JSON.stringify({ jsonrpc: "2.0", id: 9002, method: "_crow/nothing", params: {} }), 9002);
    assert.equal(answer.error?.code, -32601);
  });

  test("wrong params → invalid params", async () => {
    const line = JSON.stringify({ jsonrpc: "2.0", id: 9003, method: "session/new", params: { cwd: 42 } });
    const answer = await raw(line, 9003);
    assert.equal(answer.error?.code, -32602);
  });

  test("a relative cwd → invalid params", async () => {
    const line = JSON.stringify({
      jsonrpc: "2.0",
      id: 9004,
      method: "session/new",
      params: { cwd: "relative/dir", mcpServers: [] },
    });
    const answer = await raw(line, 9004);
    assert.equal(answer.error?.code, -32602);
  });

  test("a JSON array (batch) → invalid request", async () => {
    const answer = await raw("[1, 2, 3]", null);
    assert.equal(answer.error?.code, -32600);
  });

  test("unknown notifications are ignored: no answer, not even an error", async () => {
    const before = fx.agent.stdoutLines.length;
    fx.agent.writeRaw(JSON.stringify({ jsonrpc: "2.0", method: "_crow/ping" }));
    fx.agent.writeRaw(JSON.stringify({ jsonrpc: "2.0", method: "session/cancel", params: { sessionId: "nope" } }));
    fx.agent.writeRaw(JSON.stringify({ jsonrpc: "2.0", method: "session/cancel", params: 17 }));
    // A request after them: the agent reads its input in order, so its answer comes after anything they caused.
    const answer = await raw(JSON.stringify({ jsonrpc: "2.0", id: 9005, method: "_crow/nothing", params: {} }), 9005);
    assert.equal(answer.error?.code, -32601);
    const written = fx.agent.stdoutLines.slice(before);
    assert.deepEqual(
      written.map((line) => (JSON.parse(line) as RpcLine).id),
      [9005],
      `only the request was answered: ${written.join("\n")}`,
    );
    assert.equal(fx.agent.process.exitCode, null, "the agent is still running");
  });

  test("after all that, the agent still serves a full turn", async () => {
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    fx.mock.script(textReply("still here"));
    const turn = await fx.agent.prompt(sessionId, "ping");
    assert.equal(turn.stopReason, "end_turn");
    assert.equal(fx.agent.process.exitCode, null);
    fx.mock.assertDone();
  });
});
