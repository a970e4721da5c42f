import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { methods } from "@agentclientprotocol/sdk";
import { httpError, reply, textReply, useAcpFixture } from "@crow/testkit";

interface RpcError {
  code?: number;
  message?: string;
}

describe("crow acp: model and provider failures", () => {
  const fx = useAcpFixture({ agent: { models: ["mock-model", "mock-large"], env: { CROW_MAX_STEPS: "3" } } });

  test("malformed tool JSON is repaired or answered with an error result, and the turn goes on", async () => {
    await fx.ws.write("m.txt", "malformed ok\n");
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    fx.mock.script(
      reply()
        .toolCall("read", `{"file_path": "${fx.ws.path("m.txt")}"`)
        .toolCall("read", "this is not json at all"),
      textReply("recovered").expect((req) => {
        const tools = req.body.messages.filter((m) => m.role === "tool").map((m) => String(m.content));
        assert.match(tools[0] ?? "", /malformed ok/, "the unclosed object was repaired");
        assert.match(tools[1] ?? "", /could not be parsed/);
      }),
    );
    const turn = await fx.agent.prompt(sessionId, "read");
    assert.equal(turn.stopReason, "end_turn");
    assert.equal(turn.updates.filter((u) => u.sessionUpdate === "tool_call").length, 2);
    fx.mock.assertDone();
  });

  test("an unknown tool gets an error result naming the available tools", async () => {
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    fx.mock.script(
      reply().toolCall("teleport", { to: "mars" }),
      textReply("no such tool").expect((req) => {
        const tool = String(req.body.messages.at(-1)?.content);
        assert.match(tool, /no tool named "teleport"/);
        assert.match(tool, /read/);
      }),
    );
    const turn = await fx.agent.prompt(sessionId, "go to mars");
    assert.equal(turn.stopReason, "end_turn");
    const failed = turn.updates.find((u) => u.sessionUpdate === "tool_call_update" && u.status === "failed");
    assert.ok(failed);
    fx.mock.assertDone();
  });

  test("a 429 with Retry-After, then success: one answer, no duplicated text", async () => {
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    fx.mock.script(httpError(429, { retryAfter: 0, message: "slow down" }), textReply("after the rate limit"));
    const turn = await fx.agent.prompt(sessionId, "hi");
    assert.equal(turn.stopReason, "end_turn");
    const texts = turn.updates.flatMap((u) =>
      u.sessionUpdate === "agent_message_chunk" && u.content.type === "text" ? [u.content.text] : [],
    );
    assert.equal(texts.join(""), "after the rate limit");
    fx.mock.assertDone();
  });

  test("a stream that dies midway is retried without re-sending the text already shown", async () => {
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    fx.mock.script(reply().text("Hello, ").text("wor").dropConnection(), reply().text("Hello, ").text("world!"));
    const turn = await fx.agent.prompt(sessionId, "greet");
    assert.equal(turn.stopReason, "end_turn");
    const texts = turn.updates.flatMap((u) =>
      u.sessionUpdate === "agent_message_chunk" && u.content.type === "text" ? [u.content.text] : [],
    );
    assert.equal(texts.join(""), "Hello, world!");
    fx.mock.assertDone();
  });

  test("provider down after all retries: a JSON-RPC error with the provider's message; the session still works", async () => {
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    const down = () => httpError(503, { message: "upstream overloaded" });
    fx.mock.script(down(), down(), down());
    await assert.rejects(fx.agent.prompt(sessionId, "hello?"), (error: RpcError) => {
      assert.equal(error.code, -32603);
      assert.match(error.message ?? "", /upstream overloaded/);
      return true;
    });
    fx.mock.script(textReply("I'm back."));
    const next = await fx.agent.prompt(sessionId, "hello again?");
    assert.equal(next.stopReason, "end_turn");
    fx.mock.assertDone();
  });

  test("max steps per turn → max_turn_requests", async () => {
    await fx.ws.write("loop.txt", "x\n");
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    fx.mock.script(
      reply().toolCall("read", { file_path: fx.ws.path("loop.txt"), offset: 1 }),
      reply().toolCall("read", { file_path: fx.ws.path("loop.txt"), offset: 2 }),
      reply().toolCall("read", { file_path: fx.ws.path("loop.txt"), offset: 3 }),
    );
    const turn = await fx.agent.prompt(sessionId, "loop forever");
    assert.equal(turn.stopReason, "max_turn_requests");
    fx.mock.script(textReply("ok").expect((req) => assert.equal(req.body.messages.at(-1)?.content, "stop")));
    assert.equal((await fx.agent.prompt(sessionId, "stop")).stopReason, "end_turn");
    fx.mock.assertDone();
  });

  test("a model chosen with set_config_option is the model of the next request", async () => {
    const session = await fx.agent.newSession(fx.ws.dir);
    const select = session.configOptions?.find((o) => o.id === "model");
    assert.ok(select?.type === "select");
    assert.equal(select.currentValue, "mock-model");
    assert.equal(select.category, "model");
    const answer = await fx.agent.agent.request(methods.agent.session.setConfigOption, {
      sessionId: session.sessionId,
      configId: "model",
      value: "mock-large",
    });
    const updated = answer.configOptions.find((o) => o.id === "model");
    assert.equal(updated?.currentValue, "mock-large");
    fx.mock.script(textReply("big").expect((req) => assert.equal(req.body.model, "mock-large")));
    await fx.agent.prompt(session.sessionId, "which model?");
    await assert.rejects(
      fx.agent.agent.request(methods.agent.session.setConfigOption, {
        sessionId: session.sessionId,
        configId: "model",
        value: "no-such-model",
      }),
      (error: RpcError) => error.code === -32602,
    );
    fx.mock.assertDone();
  });

  test("two sessions in parallel do not cross-talk", async () => {
    const a = await fx.agent.newSession(fx.ws.dir);
    const b = await fx.agent.newSession(fx.ws.dir);
    // Each request answers whichever session asks; the expectation routes by the user message.
    const answer = () =>
      reply()
        .delay(50)
        .text("echo")
        .expect((req) => assert.match(String(req.body.messages.at(-1)?.content), /^session [ab]$/));
    fx.mock.script(answer(), answer());
    const [ta, tb] = await Promise.all([
      fx.agent.prompt(a.sessionId, "session a"),
      fx.agent.prompt(b.sessionId, "session b"),
    ]);
    assert.equal(ta.stopReason, "end_turn");
    assert.equal(tb.stopReason, "end_turn");
    for (const turn of [ta, tb]) {
      const texts = turn.updates.flatMap((u) =>
        u.sessionUpdate === "agent_message_chunk" && u.content.type === "text" ? [u.content.text] : [],
      );
      assert.deepEqual(texts, ["echo"]);
    }
    // Each session's next request carries only its own history.
    fx.mock.script(
      textReply("a2").expect((req) => {
        const users = req.body.messages.filter((m) => m.role === "user").map((m) => m.content);
        assert.deepEqual(users, ["session a", "again a"]);
      }),
    );
    await fx.agent.prompt(a.sessionId, "again a");
    fx.mock.assertDone();
  });

  test("a prompt for an unknown session is a JSON-RPC error", async () => {
    await assert.rejects(fx.agent.prompt("no-such-session", "hi"), (error: RpcError) => typeof error.code === "number");
  });
});

describe("crow acp: without a provider", () => {
  // Two models at the endpoint: without CROW_MODEL none is chosen (one alone would be taken, with a notice).
  const fx = useAcpFixture({ startAgent: false, mock: { models: ["mock-model", "other-model"] } });

  test("a missing base URL or model is the auth-required error at session/new (what to set), not a crash", async () => {
    const agent = await fx.spawn({ env: { CROW_MODEL: "", OPENAI_BASE_URL: "" } });
    try {
      await assert.rejects(agent.newSession(fx.ws.dir), (error: RpcError) => {
        assert.equal(error.code, -32000);
        assert.match(error.message ?? "", /OPENAI_BASE_URL.*Run crow init in a terminal/);
        return true;
      });
      assert.equal(agent.process.exitCode, null, "still running");
    } finally {
      await agent.close();
    }
    const noModel = await fx.spawn({ env: { CROW_MODEL: "" } });
    try {
      await assert.rejects(
        noModel.newSession(fx.ws.dir),
        (error: RpcError) => error.code === -32000 && /CROW_MODEL/.test(error.message ?? ""),
      );
    } finally {
      await noModel.close();
    }
  });
});
