// `crow acp --listen` end to end: the built agent on a loopback port, ACP clients over WebSocket and Streamable HTTP
// (the SDK's experimental clients), the LLM scripted by the mock.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { methods } from "@agentclientprotocol/sdk";
import { connectRemote, type RemoteKind, reply, textReply } from "@crow/testkit";
import { listenFixture } from "./listen-helpers.js";

const textOf = (updates: readonly { sessionUpdate: string }[]) =>
  updates
    .map((u) =>
      u.sessionUpdate === "agent_message_chunk" ? ((u as { content?: { text?: string } }).content?.text ?? "") : "",
    )
    .join("");

describe("crow acp --listen", () => {
  const f = listenFixture();

  for (const kind of ["ws", "http"] as RemoteKind[]) {
    test(`${kind}: a prompt with a tool round and a permission question, then session/load on a new connection`, async () => {
      const a = await connectRemote(f.server, kind);
      assert.equal(a.initialize.agentCapabilities?.loadSession, true);
      const { sessionId } = await a.newSession(f.ws.dir);
      await a.agent.request(methods.agent.session.setMode, { sessionId, modeId: "ask" });
      const file = f.ws.path(`over-${kind}.txt`);
      f.mock.script(reply().toolCall("write", { file_path: file, content: kind }), textReply(`wrote it over ${kind}`));
      const turn = await a.prompt(sessionId, "write the file");
      assert.equal(turn.stopReason, "end_turn");
      assert.equal(await f.ws.read(`over-${kind}.txt`), kind);
      // The permission question went back over this connection, about this session's tool call.
      assert.equal(a.permissionRequests.length, 1);
      assert.equal(a.permissionRequests[0]?.sessionId, sessionId);
      assert.ok(turn.updates.some((u) => u.sessionUpdate === "tool_call"));
      assert.match(textOf(turn.updates), new RegExp(`wrote it over ${kind}`));
      await a.agent.request(methods.agent.session.close, { sessionId });
      await a.close();

      const b = await connectRemote(f.server, kind);
      await b.agent.request(methods.agent.session.load, { sessionId, cwd: f.ws.dir, mcpServers: [] });
      assert.match(textOf(b.updates(sessionId)), new RegExp(`wrote it over ${kind}`), "the load replays the history");
      f.mock.script(textReply("still here"));
      assert.equal((await b.prompt(sessionId, "again")).stopReason, "end_turn");
      await b.close();
      f.mock.assertDone();
    });

    test(`${kind}: session/cancel stops a turn waiting on a permission question`, async () => {
      const a = await connectRemote(f.server, kind, { permissions: () => "wait" });
      const { sessionId } = await a.newSession(f.ws.dir);
      await a.agent.request(methods.agent.session.setMode, { sessionId, modeId: "ask" });
      f.mock.script(reply().toolCall("write", { file_path: f.ws.path("never.txt"), content: "x" }));
      const prompt = a.prompt(sessionId, "write, then be cancelled");
      await a.nextPermission();
      await a.cancel(sessionId);
      assert.equal((await prompt).stopReason, "cancelled");
      await assert.rejects(f.ws.read("never.txt"));
      await a.close();
      f.mock.assertDone();
    });
  }

  test("fs/read_text_file goes back to the client over the connection", async () => {
    await f.ws.write("editor.txt", "from the editor's buffer\n");
    const a = await connectRemote(f.server, "ws", { fs: true });
    const { sessionId } = await a.newSession(f.ws.dir);
    f.mock.script(reply().toolCall("read", { file_path: f.ws.path("editor.txt") }), textReply("read"));
    assert.equal((await a.prompt(sessionId, "read it")).stopReason, "end_turn");
    assert.deepEqual(a.fsReads, [f.ws.path("editor.txt")]);
    await a.close();
    f.mock.assertDone();
  });

  test("two clients: a live session is its connection's; stored sessions are anyone's once closed", async () => {
    const a = await connectRemote(f.server, "ws");
    const b = await connectRemote(f.server, "http");
    const { sessionId } = await a.newSession(f.ws.dir);
    f.mock.script(textReply("A's answer"));
    await a.prompt(sessionId, "hello");
    // B cannot prompt A's live session (it is open on A's connection) …
    await assert.rejects(
      b.agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "hijack" }] }),
      /is open on connection #\d+/,
    );
    // … nor take it over with session/load or resume, nor close or delete it.
    for (const method of [methods.agent.session.load, methods.agent.session.resume] as const) {
      await assert.rejects(
        b.agent.request(method, { sessionId, cwd: f.ws.dir, mcpServers: [] }),
        /is open on connection #\d+/,
      );
    }
    await assert.rejects(b.agent.request(methods.agent.session.delete, { sessionId }), /is open on connection #\d+/);
    // A still has it.
    f.mock.script(textReply("A again"));
    assert.equal((await a.prompt(sessionId, "still mine?")).stopReason, "end_turn");
    // Closed by A: stored, and B may open it.
    await a.agent.request(methods.agent.session.close, { sessionId });
    await b.agent.request(methods.agent.session.load, { sessionId, cwd: f.ws.dir, mcpServers: [] });
    assert.match(textOf(b.updates(sessionId)), /A again/);
    await a.close();
    await b.close();
    f.mock.assertDone();
  });
});

describe("crow acp --listen: a client that drops mid-turn", () => {
  const f = listenFixture();

  test("the turn goes on, and session/load on a new connection gets the rest of it", async () => {
    const a = await connectRemote(f.server, "ws");
    const { sessionId } = await a.newSession(f.ws.dir);
    // The command waits for a file the test writes once the client is gone: the turn outlives the connection.
    f.mock.script(
      reply().toolCall("terminal", { command: `while [ ! -f ${f.ws.path("go")} ]; do sleep 0.05; done; echo went` }),
      textReply("finished after the drop"),
    );
    const prompt = a.prompt(sessionId, "wait for go").catch(() => "dropped");
    await a.waitForUpdate(sessionId, (u) => u.sessionUpdate === "tool_call");
    await a.close();
    assert.equal(await prompt, "dropped");
    // The agent says it kept the turn (its readiness signal), then the client comes back.
    await f.server.waitForStderr(new RegExp(`a client dropped while a turn ran \\(session ${sessionId}\\)`));
    const b = await connectRemote(f.server, "ws");
    const loaded = b.agent.request(methods.agent.session.load, { sessionId, cwd: f.ws.dir, mcpServers: [] });
    await f.ws.write("go", "");
    await loaded;
    const replayed = textOf(b.updates(sessionId));
    assert.match(replayed, /finished after the drop/, "the part of the turn that ran while the client was away");
    const ran = b.updates(sessionId).find((u) => u.sessionUpdate === "tool_call_update" && u.status === "completed");
    assert.ok(ran, "the command's call, completed while the client was away");
    f.mock.script(textReply("and on"));
    assert.equal((await b.prompt(sessionId, "next")).stopReason, "end_turn");
    await b.close();
    f.mock.assertDone();
  });
});
