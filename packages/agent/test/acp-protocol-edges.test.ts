import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { type ContentBlock, methods } from "@agentclientprotocol/sdk";
import {
  type AcpTestClient,
  type MockLlm,
  reply,
  spawnAcpAgent,
  startMockLlm,
  type TempWorkspace,
  tempWorkspace,
  textReply,
} from "@crow/testkit";

/** The JSON-RPC error the agent answered to request `id` (read from the wire: some SDK helpers swallow errors). */
function wireError(agent: AcpTestClient, id: number): { code?: number; message?: string } | undefined {
  for (const line of agent.stdoutLines) {
    const message = JSON.parse(line) as { id?: number; error?: { code?: number; message?: string } };
    if (message.id === id) return message.error;
  }
  return undefined;
}

describe("crow acp: protocol edges editors run into", () => {
  let mock: MockLlm;
  let ws: TempWorkspace;
  let home: string;
  let agent: AcpTestClient;

  before(async () => {
    mock = await startMockLlm();
    ws = await tempWorkspace();
    home = await mkdtemp(path.join(tmpdir(), "crow-home-"));
    // Storing a message marked SLOW takes a while, so a cancelled turn that wrote one ends well after the cancel:
    // the prompt sent right behind the cancel surely arrives while it is still running.
    await writeFile(
      path.join(home, "slow-store.mjs"),
      `export default (crow) => crow.on("message", async ({ message }) => {
        if (message.role === "assistant" && String(message.content).includes("SLOW")) await new Promise((r) => setTimeout(r, 1500));
      });\n`,
    );
    await writeFile(path.join(home, "config.yaml"), "extensions:\n  - ./slow-store.mjs\n");
    agent = await spawnAcpAgent({ llmUrl: mock.url, env: { CROW_HOME: home }, session: { notices: {} } });
  });
  after(async () => {
    await agent.close();
    await mock.close();
    await ws.cleanup();
    await rm(home, { recursive: true, force: true });
  });

  test("a prompt sent right after cancel, before the cancelled prompt answered, runs once that turn ended", async () => {
    const { sessionId } = await agent.newSession(ws.dir);
    mock.script(
      reply().text("Writing a long essay SLOW").hang(),
      textReply("Here instead.").expect((req) => {
        const messages = req.body.messages;
        assert.equal(messages.at(-1)?.content, "something shorter");
        assert.equal(messages.at(-2)?.content, "Writing a long essay SLOW", "the cancelled turn's text came first");
      }),
    );
    const first = agent.prompt(sessionId, "write an essay");
    await agent.waitForUpdate(sessionId, (u) => u.sessionUpdate === "agent_message_chunk");
    // One write: the second prompt is on the wire right behind the cancel, long before the first one's answer.
    const cancel = { jsonrpc: "2.0", method: "session/cancel", params: { sessionId } };
    const prompt = {
      jsonrpc: "2.0",
      id: 7100,
      method: "session/prompt",
      params: { sessionId, prompt: [] as unknown[] },
    };
    prompt.params.prompt.push({ type: "text", text: "something shorter" });
    agent.writeRaw(`${JSON.stringify(cancel)}\n${JSON.stringify(prompt)}`);
    const answer = JSON.parse(await agent.waitForLine((line) => line.includes('"id":7100'))) as {
      result?: { stopReason?: string };
      error?: unknown;
    };
    assert.equal((await first).stopReason, "cancelled");
    assert.deepEqual(answer, { jsonrpc: "2.0", id: 7100, result: { stopReason: "end_turn" } });
    mock.assertDone();
  });

  test("a prompt while another runs is queued: it runs next, each answers for itself; cancel empties the queue", async () => {
    const { sessionId } = await agent.newSession(ws.dir);
    mock.script(
      reply().text("first").delay(300).text(" done"),
      textReply("second done").expect((req) => {
        const messages = req.body.messages;
        assert.equal(messages.at(-1)?.content, "and another");
        assert.equal(messages.at(-2)?.content, "first done", "the queued prompt ran after the first turn");
      }),
    );
    const first = agent.prompt(sessionId, "long task");
    await agent.waitForUpdate(sessionId, (u) => u.sessionUpdate === "agent_message_chunk");
    const second = await agent.prompt(sessionId, "and another");
    assert.equal((await first).stopReason, "end_turn");
    assert.equal(second.stopReason, "end_turn");
    assert.ok(
      second.updates.some((u) => u.sessionUpdate === "agent_message_chunk" && JSON.stringify(u).includes("second")),
    );
    mock.assertDone();

    // session/cancel: the running turn and every prompt queued behind it answer cancelled; none reaches the model.
    mock.script(reply().text("busy").hang());
    const running = agent.prompt(sessionId, "long task again");
    await agent.waitForUpdate(
      sessionId,
      (u) => u.sessionUpdate === "agent_message_chunk" && JSON.stringify(u).includes("busy"),
    );
    const queued = [agent.prompt(sessionId, "queued one"), agent.prompt(sessionId, "queued two")];
    const seen = mock.requests.length;
    await agent.cancel(sessionId);
    assert.equal((await running).stopReason, "cancelled");
    for (const prompt of queued) assert.equal((await prompt).stopReason, "cancelled");
    assert.equal(mock.requests.length, seen, "no queued prompt ran");
    mock.assertDone();
  });

  test("$/cancel_request takes one queued prompt out of the queue", async () => {
    const { sessionId } = await agent.newSession(ws.dir);
    mock.script(
      reply().text("working").delay(400).text(" done"),
      textReply("kept").expect((req) => assert.equal(req.body.messages.at(-1)?.content, "keep me")),
    );
    const first = agent.prompt(sessionId, "long task");
    await agent.waitForUpdate(sessionId, (u) => u.sessionUpdate === "agent_message_chunk");
    const id = 7200;
    const dropped = agent.waitForLine((line) => line.includes(`"id":${id}`));
    agent.writeRaw(
      JSON.stringify({
        jsonrpc: "2.0",
        id,
        method: "session/prompt",
        params: { sessionId, prompt: [{ type: "text", text: "drop me" }] },
      }),
    );
    const kept = agent.prompt(sessionId, "keep me");
    agent.writeRaw(JSON.stringify({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: id } }));
    assert.deepEqual(JSON.parse(await dropped), { jsonrpc: "2.0", id, result: { stopReason: "cancelled" } });
    assert.equal((await first).stopReason, "end_turn");
    assert.equal((await kept).stopReason, "end_turn");
    mock.assertDone();
  });

  test("authenticate with an unknown method id and an empty prompt are invalid params", async () => {
    const { sessionId } = await agent.newSession(ws.dir);
    agent.writeRaw(JSON.stringify({ jsonrpc: "2.0", id: 7001, method: "authenticate", params: { methodId: "oauth" } }));
    await agent.waitForLine((line) => line.includes('"id":7001'));
    const auth = wireError(agent, 7001);
    assert.equal(auth?.code, -32602);
    assert.match(auth?.message ?? "", /Invalid params/);
    agent.writeRaw(
      JSON.stringify({ jsonrpc: "2.0", id: 7002, method: "session/prompt", params: { sessionId, prompt: [] } }),
    );
    await agent.waitForLine((line) => line.includes('"id":7002'));
    assert.equal(wireError(agent, 7002)?.code, -32602);
    assert.match(JSON.stringify(wireError(agent, 7002)), /prompt is empty/);
  });

  test("session/new is answered first on the wire, its commands right behind, before the next request's answer", async () => {
    const { sessionId } = await agent.newSession(ws.dir);
    // Sent the moment the session id is known: the commands must not wait for a timer behind it.
    await agent.prompt(sessionId, "/help");
    const lines = [...agent.stdoutLines];
    const answered = lines.findIndex((line) => line.includes('"result"') && line.includes(sessionId));
    const commands = lines.findIndex((line) => line.includes(sessionId) && line.includes("available_commands_update"));
    const helped = lines.findLastIndex((line) => line.includes('"stopReason"'));
    assert.ok(answered >= 0, "session/new was answered");
    assert.ok(commands > answered, `the commands follow the session/new answer (lines ${answered}, ${commands})`);
    assert.ok(commands < helped, `the commands come before the /help prompt's answer (lines ${commands}, ${helped})`);
  });

  test("an MCP server that fails to start is a notice for a client that takes notices", async () => {
    const { sessionId } = await agent.newSession(ws.dir, [
      { name: "broken", command: path.join(ws.dir, "no-such-server"), args: [], env: [] },
    ]);
    const notice = await agent.waitForUpdate(sessionId, (u) => u.sessionUpdate === "notice", true);
    assert.ok(notice.sessionUpdate === "notice");
    assert.equal(notice.severity, "warning");
    assert.match(notice.description ?? "", /MCP server "broken" failed to start/);
    assert.ok(
      !agent.updates(sessionId).some((u) => u.sessionUpdate === "agent_message_chunk"),
      "not as chat text as well",
    );
  });

  test("session/load replays a prompt's resource, link and image blocks as they were sent", async () => {
    const file = await ws.write("notes.md", "# Notes\nremember the milk\n");
    const blocks: ContentBlock[] = [
      { type: "text", text: "Summarize these:" },
      { type: "resource_link", uri: `file://${file}`, name: "notes.md" },
      { type: "resource", resource: { uri: "file:///virtual/todo.txt", mimeType: "text/plain", text: "buy eggs" } },
      {
        type: "image",
        mimeType: "image/png",
        data: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
      },
    ];
    const { sessionId } = await agent.newSession(ws.dir);
    mock.script(
      textReply("Milk and eggs.").expect((req) => {
        const sent = JSON.stringify(req.body.messages.at(-1));
        assert.match(sent, /remember the milk/, "the model gets the file's text");
        assert.match(sent, /buy eggs/);
        assert.doesNotMatch(sent, /"original"/, "the kept blocks are not sent to the model");
      }),
    );
    assert.equal((await agent.prompt(sessionId, blocks)).stopReason, "end_turn");

    // Closed here first: a session open in one process is not loaded into another behind its back.
    await agent.agent.request(methods.agent.session.close, { sessionId });
    const second = await spawnAcpAgent({ llmUrl: mock.url, env: { CROW_HOME: home } });
    try {
      const before = second.notifications.length;
      await second.agent.request(methods.agent.session.load, { sessionId, cwd: ws.dir, mcpServers: [] });
      const replayed = second.notifications
        .slice(before)
        .map((n) => n.update)
        .flatMap((u) => (u.sessionUpdate === "user_message_chunk" ? [u.content] : []));
      assert.deepEqual(replayed, blocks);
    } finally {
      await second.close();
    }
    mock.assertDone();
  });
});
