import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import { chunkText, reply, textReply, useAcpFixture } from "@crow/testkit";

const kinds = (updates: SessionUpdate[]) => updates.map((u) => u.sessionUpdate);
describe("crow acp: a real task over stdio with the real crow-mcp", () => {
  const fx = useAcpFixture();

  test("initialize advertises what is implemented", () => {
    const caps = fx.agent.initialize.agentCapabilities;
    assert.equal(fx.agent.initialize.protocolVersion, 1);
    assert.equal(caps?.promptCapabilities?.image, true);
    assert.equal(caps?.promptCapabilities?.embeddedContext, true);
    assert.deepEqual(caps?.mcpCapabilities, { http: true, sse: true });
    assert.equal(fx.agent.initialize.agentInfo?.name, "crow");
  });

  test("reads, edits and runs a command across turns, leaving the right file contents", async () => {
    const file = await fx.ws.write(
      "greet.py",
      'def greet(name):\n    return "Hello " + name\n\nprint(greet("crow"))\n',
    );
    const session = await fx.agent.newSession(fx.ws.dir);
    assert.equal(session.modes?.currentModeId, "code");
    assert.equal(session.configOptions?.[0]?.category, "model");

    fx.mock.script(
      reply()
        .reasoning("I should look at the file first.")
        .text("Let me read it.")
        .toolCall("read", { file_path: file })
        .usage(120, 10),
      reply()
        .toolCall("edit", { file_path: file, old_string: '"Hello " + name', new_string: 'f"Hello, {name}!"' })
        .expect((req) => {
          const last = req.body.messages.at(-1);
          assert.equal(last?.role, "tool");
          assert.match(String(last?.content), /return "Hello " \+ name/);
        }),
      reply()
        .toolCall("terminal", { command: "python3 greet.py" })
        .expect((req) => assert.match(String(req.body.messages.at(-1)?.content), /f"Hello, \{name\}!"/)),
      textReply("Done: it prints Hello, crow!").expect((req) =>
        assert.match(String(req.body.messages.at(-1)?.content), /Hello, crow!/),
      ),
    );
    const first = await fx.agent.prompt(session.sessionId, "Make the greeting friendlier and run it.");
    assert.equal(first.stopReason, "end_turn");
    assert.equal(
      await fx.ws.read("greet.py"),
      'def greet(name):\n    return f"Hello, {name}!"\n\nprint(greet("crow"))\n',
    );
    assert.equal(chunkText(first.updates, "agent_thought_chunk"), "I should look at the file first.");
    assert.equal(chunkText(first.updates, "agent_message_chunk"), "Let me read it.Done: it prints Hello, crow!");

    const calls = first.updates.filter((u) => u.sessionUpdate === "tool_call");
    assert.deepEqual(
      calls.map((c) => c.sessionUpdate === "tool_call" && [c.kind, c.status]),
      [
        ["read", "pending"],
        ["edit", "pending"],
        ["execute", "pending"],
      ],
    );
    const read = calls[0];
    assert.ok(read?.sessionUpdate === "tool_call");
    assert.deepEqual(read.locations, [{ path: file }]);
    assert.deepEqual(read.rawInput, { file_path: file });
    const finals = first.updates.filter((u) => u.sessionUpdate === "tool_call_update" && u.status === "completed");
    assert.equal(finals.length, 3);
    const editDone = finals[1];
    assert.ok(editDone?.sessionUpdate === "tool_call_update");
    assert.ok(
      editDone.content?.some((c) => c.type === "diff" && c.path === file && c.newText.includes('f"Hello, {name}!"')),
      "the edit carries a diff",
    );
    // Every tool call goes pending → in_progress → completed.
    for (const call of calls) {
      assert.ok(call.sessionUpdate === "tool_call");
      const statuses = first.updates
        .filter((u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === call.toolCallId && u.status)
        .map((u) => (u.sessionUpdate === "tool_call_update" ? u.status : ""));
      assert.deepEqual(statuses, ["in_progress", "completed"]);
    }
    const usage = first.updates.find((u) => u.sessionUpdate === "usage_update");
    assert.ok(usage?.sessionUpdate === "usage_update");
    assert.equal(usage.used, 130);
    assert.ok(usage.size > usage.used);

    // A second turn sees the whole history.
    fx.mock.script(
      textReply("You're welcome.").expect((req) => {
        const roles = req.body.messages.map((m) => m.role);
        assert.deepEqual(roles, [
          "system",
          "user",
          "assistant",
          "tool",
          "assistant",
          "tool",
          "assistant",
          "tool",
          "assistant",
          "user",
        ]);
      }),
    );
    const second = await fx.agent.prompt(session.sessionId, "Thanks!");
    assert.equal(second.stopReason, "end_turn");
    assert.deepEqual(kinds(second.updates), ["agent_message_chunk"]);
    fx.mock.assertDone();
  });

  test("tool calls of one message run in parallel and their results come back in call order", async () => {
    await fx.ws.write("a.txt", "alpha\n");
    await fx.ws.write("b.txt", "beta\n");
    const session = await fx.agent.newSession(fx.ws.dir);
    fx.mock.script(
      reply()
        .toolCall("terminal", { command: "sleep 0.3; echo slow-done" })
        .toolCall("read", { file_path: fx.ws.path("a.txt") })
        .toolCall("read", { file_path: fx.ws.path("b.txt") }),
      textReply("All three done.").expect((req) => {
        const tools = req.body.messages.filter((m) => m.role === "tool").map((m) => String(m.content));
        assert.equal(tools.length, 3);
        assert.match(tools[0] ?? "", /slow-done/);
        assert.match(tools[1] ?? "", /alpha/);
        assert.match(tools[2] ?? "", /beta/);
      }),
    );
    const turn = await fx.agent.prompt(session.sessionId, "run and read");
    assert.equal(turn.stopReason, "end_turn");
    const completed = turn.updates
      .filter((u) => u.sessionUpdate === "tool_call_update" && u.status === "completed")
      .map((u) => (u.sessionUpdate === "tool_call_update" ? u.toolCallId : ""));
    const started = turn.updates
      .filter((u) => u.sessionUpdate === "tool_call")
      .map((u) => (u.sessionUpdate === "tool_call" ? u.toolCallId : ""));
    // The slow terminal call was announced first but finished last: the reads did not wait for it.
    assert.equal(completed.length, 3);
    assert.equal(completed.at(-1), started[0]);
    fx.mock.assertDone();
  });

  test("available commands are advertised and /help answers without calling the model", async () => {
    const session = await fx.agent.newSession(fx.ws.dir);
    const commands = await fx.agent.waitForUpdate(
      session.sessionId,
      (u) => u.sessionUpdate === "available_commands_update",
      true,
    );
    assert.ok(commands.sessionUpdate === "available_commands_update");
    assert.deepEqual(
      commands.availableCommands.map((c) => c.name),
      ["compact", "clear", "stop", "help", "rewind"],
    );
    const before = fx.mock.requests.length;
    const turn = await fx.agent.prompt(session.sessionId, "/help");
    assert.equal(turn.stopReason, "end_turn");
    assert.match(chunkText(turn.updates, "agent_message_chunk"), /\/stop/);
    assert.equal(fx.mock.requests.length, before);
  });

  test("stdout carried nothing but JSON-RPC", () => {
    for (const line of fx.agent.stdoutLines) {
      assert.equal((JSON.parse(line) as { jsonrpc: string }).jsonrpc, "2.0", line);
    }
  });
});
