// Sessions belong to their connection (attack tests, issue 45 item 5): over one `crow acp --listen`, connection B
// holds the token too, and names connection A's live session in every method that takes one. Each is refused, says
// which connection holds the session, and leaves A's editor, files and conversation alone. A request whose id is
// null is refused (it used to pass the guard as if it were a notification).
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { methods } from "@agentclientprotocol/sdk";
import { connectRemote, type RemoteClient, reply, textReply } from "@crow/testkit";
import { WebSocket } from "ws";
import { listenFixture } from "./listen-helpers.js";

/** What the refusal of a method naming A's session says: the connection holding it (#1, its client), no secret. */
const HELD_BY_A = /session \S+ is open on connection #1 \(crow-remote-test 0\.0\.0, connected at [0-9:]+ UTC\)/;

type Json = Record<string, unknown>;

/** A raw WebSocket client (what the SDK's client would never send): initialize, then one message and its answer. */
async function rawExchange(server: { url: string; token: string }, message: Json): Promise<Json> {
  const socket = new WebSocket(server.url.replace(/^http/, "ws"), {
    headers: { Authorization: `Bearer ${server.token}` },
  });
  const received: Json[] = [];
  const waiters = new Set<() => void>();
  socket.on("message", (data) => {
    received.push(JSON.parse(String(data)) as Json);
    for (const wake of [...waiters]) wake();
  });
  await new Promise((resolve, reject) => {
    socket.once("open", resolve);
    socket.once("error", reject);
  });
  /** The first answer (a message without a method) after `from`. */
  const answer = (from: number) =>
    new Promise<Json>((resolve) => {
      const look = () => {
        const found = received.slice(from).find((m) => m.method === undefined);
        if (!found) return;
        waiters.delete(look);
        resolve(found);
      };
      waiters.add(look);
      look();
    });
  try {
    socket.send(
      JSON.stringify({
        jsonrpc: "2.0",
        id: 0,
        method: "initialize",
        params: { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: "raw", version: "0" } },
      }),
    );
    await answer(0);
    const from = received.length;
    socket.send(JSON.stringify(message));
    return await answer(from);
  } finally {
    socket.close();
  }
}

describe("crow acp --listen: a session is its connection's alone", () => {
  const f = listenFixture();
  let a: RemoteClient;
  let b: RemoteClient;
  let sessionId = "";

  test("A opens a session and writes a file in a turn (the setup)", async () => {
    a = await connectRemote(f.server, "ws", { fs: true });
    b = await connectRemote(f.server, "ws");
    ({ sessionId } = await a.newSession(f.ws.dir));
    f.mock.script(
      reply().toolCall("write", { file_path: f.ws.path("a-work.txt"), content: "A's work\n" }),
      textReply("A wrote it"),
    );
    assert.equal((await a.prompt(sessionId, "write a-work.txt")).stopReason, "end_turn");
    assert.equal(await f.ws.read("a-work.txt"), "A's work\n");
    f.mock.assertDone();
  });

  test("B cannot rewind A's files or conversation (_crow/rewind), nor list A's rewind points", async () => {
    const { points } = (await a.agent.request("_crow/rewind", { sessionId })) as { points: Array<{ seq: number }> };
    const seq = points[0]?.seq;
    assert.equal(typeof seq, "number", "A itself may use its session's rewind points");
    await assert.rejects(b.agent.request("_crow/rewind", { sessionId }), HELD_BY_A);
    await assert.rejects(
      b.agent.request("_crow/rewind", { sessionId, seq, scope: "both", overwrite: true }),
      HELD_BY_A,
    );
    assert.equal(await f.ws.read("a-work.txt"), "A's work\n", "A's file is still there");
    f.mock.script(
      textReply("still here").expect((req) => {
        const said = JSON.stringify(req.body.messages);
        assert.match(said, /write a-work\.txt/, "A's conversation still has its first turn");
      }),
    );
    assert.equal((await a.prompt(sessionId, "next")).stopReason, "end_turn");
    f.mock.assertDone();
  });

  test("B cannot compact A's conversation (_crow/compact)", async () => {
    const asked = f.mock.requests.length;
    await assert.rejects(b.agent.request("_crow/compact", { sessionId }), HELD_BY_A);
    assert.equal(f.mock.requests.length, asked, "no summary was asked for");
  });

  test("B cannot prompt, switch, fork, load, resume, close or delete A's live session", async () => {
    const cwd = f.ws.dir;
    const attempts: Array<[string, Json]> = [
      [methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "hijack" }] }],
      [methods.agent.session.setMode, { sessionId, modeId: "code" }],
      [methods.agent.session.setConfigOption, { sessionId, configId: "mode", value: "code" }],
      ["session/set_model", { sessionId, modelId: "mock-model" }],
      ["session/fork", { sessionId, cwd, mcpServers: [] }],
      [methods.agent.session.load, { sessionId, cwd, mcpServers: [] }],
      [methods.agent.session.resume, { sessionId, cwd, mcpServers: [] }],
      [methods.agent.session.close, { sessionId }],
      [methods.agent.session.delete, { sessionId }],
      ["_crow/anything", { sessionId }],
    ];
    for (const [method, params] of attempts) {
      await assert.rejects(b.agent.request(method, params), HELD_BY_A, method);
    }
  });

  test("a request with a null id is refused, not let through as a notification (session/load of A's session)", async () => {
    const answer = await rawExchange(f.server, {
      jsonrpc: "2.0",
      id: null,
      method: "session/load",
      params: { sessionId, cwd: f.ws.dir, mcpServers: [] },
    });
    assert.equal(answer.id, null);
    assert.equal(answer.result, undefined, "not loaded");
    assert.match(String((answer.error as Json | undefined)?.message), /id must be a string or a number/);
    // A still holds its session.
    f.mock.script(textReply("A's again"));
    assert.equal((await a.prompt(sessionId, "mine?")).stopReason, "end_turn");
    f.mock.assertDone();
  });

  test("a session/cancel from B does not stop A's turn", async () => {
    f.mock.script(
      reply().toolCall("terminal", { command: `while [ ! -f ${f.ws.path("go")} ]; do sleep 0.05; done; echo went` }),
      textReply("A finished"),
    );
    const turn = a.prompt(sessionId, "wait for go");
    await a.waitForUpdate(sessionId, (u) => u.sessionUpdate === "tool_call");
    await b.agent.notify(methods.agent.session.cancel, { sessionId });
    // B's next request is read after its cancel: the cancel was handled (refused) by then.
    await assert.rejects(b.agent.request("_crow/compact", { sessionId }), HELD_BY_A);
    await f.ws.write("go", "");
    assert.equal((await turn).stopReason, "end_turn");
    f.mock.assertDone();
  });

  test("B cannot run a subagent under A's session (_crow/subagent parentSessionId): A's editor is never asked", async () => {
    await f.ws.write("secret.txt", "A's buffer\n");
    // What the child would do on A's tools if it ran: read through A's editor.
    f.mock.script(reply().toolCall("read", { file_path: f.ws.path("secret.txt") }), textReply("got it"));
    await assert.rejects(
      b.agent.request("_crow/subagent", { cwd: f.ws.dir, prompt: "read secret.txt", parentSessionId: sessionId }),
      HELD_BY_A,
    );
    assert.deepEqual(a.fsReads, [], "A's editor served no read");
    assert.equal(f.mock.pending(), 2, "no child ran");
    // A may run one under its own session (the control): the child reads through A's editor.
    await a.agent.request("_crow/subagent", { cwd: f.ws.dir, prompt: "read secret.txt", parentSessionId: sessionId });
    assert.deepEqual(a.fsReads, [f.ws.path("secret.txt")]);
    f.mock.assertDone();
    await a.close();
    await b.close();
  });
});
