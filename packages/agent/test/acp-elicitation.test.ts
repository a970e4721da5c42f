import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import type { CreateElicitationRequest, ElicitationSchema, McpServer, SessionUpdate } from "@agentclientprotocol/sdk";
import {
  type AcpTestClient,
  ELICIT_MCP_SERVER,
  type ElicitationChoice,
  reply,
  textReply,
  useAcpFixture,
} from "@crow/testkit";

/** The testkit's MCP server that asks during its tool calls. */
const BOOKING: McpServer = { name: "booking", command: process.execPath, args: [ELICIT_MCP_SERVER], env: [] };

/** A form question as the client got it, session-scoped (asserted). */
function formQuestion(request: CreateElicitationRequest | undefined) {
  assert.ok(
    request?.mode === "form" && "sessionId" in request,
    `a session-scoped form question: ${JSON.stringify(request)}`,
  );
  return request as {
    sessionId: string;
    toolCallId?: string | null;
    message: string;
    requestedSchema: ElicitationSchema;
  };
}

/** Waits until `check` holds (the client records what it got asynchronously). */
async function until(check: () => boolean): Promise<void> {
  while (!check()) await sleep(10);
}

/** The text of the last tool message of a request the mock got. */
function lastToolText(messages: ReadonlyArray<{ role: string; content?: unknown }>): string {
  const tool = messages.findLast((m) => m.role === "tool");
  return typeof tool?.content === "string" ? tool.content : JSON.stringify(tool?.content);
}

/** The ACP tool call id of the session's `tool_call` for a tool title starting with `name`. */
function toolCallIdOf(updates: SessionUpdate[], name: string): string | undefined {
  const call = updates.find((u) => u.sessionUpdate === "tool_call" && u.title.startsWith(name));
  return call?.sessionUpdate === "tool_call" ? call.toolCallId : undefined;
}

describe("crow acp: questions to a client that can answer them (elicitation capability)", () => {
  let answer: (request: CreateElicitationRequest) => ElicitationChoice = () => ({ action: "decline" });
  const fx = useAcpFixture({
    agent: { elicitation: { form: true, url: true }, elicit: (request) => answer(request) },
  });
  const agent = (): AcpTestClient => fx.agent;

  test("an MCP server's form question reaches the client, scoped to the session and tool call, and the answer reaches the server", async () => {
    const { sessionId } = await agent().newSession(fx.ws.dir, [BOOKING]);
    const before = agent().elicitations.length;
    answer = () => ({ action: "accept", content: { guests: 4, name: "Ada", terrace: true, dishes: ["soup", "cake"] } });
    fx.mock.script(
      reply().toolCall("book_table", {}),
      textReply("Booked.").expect((request) => {
        const text = lastToolText(request.body.messages);
        assert.match(text, /"action":"accept"/);
        assert.match(text, /"guests":4/);
        assert.match(text, /"dishes":\["soup","cake"\]/);
      }),
    );
    const turn = await agent().prompt(sessionId, "book a table");
    assert.equal(turn.stopReason, "end_turn");
    fx.mock.assertDone();
    const questions = agent().elicitations.slice(before);
    assert.equal(questions.length, 1);
    const request = formQuestion(questions[0]?.request);
    assert.equal(request.sessionId, sessionId);
    assert.equal(request.toolCallId, toolCallIdOf(turn.updates, "book_table"));
    assert.ok(request.toolCallId, "the question names the tool call waiting for it");
    assert.equal(request.message, "booking: How many guests?");
    assert.equal(request.requestedSchema.properties?.guests?.type, "number");
    // On the wire, the question comes after the tool call it is about (the session's outbox keeps the order).
    const id = `"${request.toolCallId}"`;
    const lines = agent().stdoutLines;
    const announced = lines.findIndex((l) => l.includes('"sessionUpdate":"tool_call"') && l.includes(id));
    const asked = lines.findIndex((l) => l.includes('"method":"elicitation/create"') && l.includes(id));
    assert.ok(announced !== -1 && announced < asked, "tool_call before elicitation/create");
    assert.deepEqual(request.requestedSchema.required, ["guests"]);
  });

  test("a URL question goes out in URL mode, and its completion as elicitation/complete", async () => {
    const { sessionId } = await agent().newSession(fx.ws.dir, [BOOKING]);
    const before = agent().elicitations.length;
    answer = () => ({ action: "accept" });
    fx.mock.script(
      reply().toolCall("sign_in", {}),
      textReply("Signed in.").expect((request) => {
        assert.match(lastToolText(request.body.messages), /"action":"accept"/);
      }),
    );
    const turn = await agent().prompt(sessionId, "sign in");
    assert.equal(turn.stopReason, "end_turn");
    const request = agent().elicitations[before]?.request;
    assert.ok(request?.mode === "url" && "url" in request);
    assert.equal(request.url, "https://booking.example/sign-in");
    assert.equal(request.elicitationId, "sign-in-1");
    await until(() => agent().completedElicitations.includes("sign-in-1"));
  });

  test("ask_user: offered to the model, the question goes to the client, the answer is the tool result", async () => {
    const { sessionId } = await agent().newSession(fx.ws.dir);
    const before = agent().elicitations.length;
    answer = () => ({ action: "accept", content: { answer: "postgres" } });
    fx.mock.script(
      reply()
        .toolCall("ask_user", { question: "Which database?", choices: ["sqlite", "postgres"] })
        .expect((request) => {
          assert.ok(
            request.body.tools?.some((t) => t.function.name === "ask_user"),
            "ask_user is offered",
          );
        }),
      textReply("Postgres it is.").expect((request) => {
        assert.equal(lastToolText(request.body.messages), "The user picked: postgres");
      }),
    );
    const turn = await agent().prompt(sessionId, "set up the database");
    assert.equal(turn.stopReason, "end_turn");
    fx.mock.assertDone();
    // The editor's tool call says what is asked.
    const call = turn.updates.find((u) => u.sessionUpdate === "tool_call" && u.title.startsWith("ask_user"));
    assert.equal(call?.sessionUpdate === "tool_call" ? call.title : undefined, "ask_user: Which database?");
    const request = formQuestion(agent().elicitations[before]?.request);
    assert.equal(request.message, "Which database?");
    assert.equal(request.toolCallId, toolCallIdOf(turn.updates, "ask_user"));
    assert.deepEqual(request.requestedSchema.properties?.answer, {
      type: "string",
      title: "Choice",
      enum: ["sqlite", "postgres"],
    });
    // The tool call ends completed with the answer as its content.
    const done = turn.updates.findLast((u) => u.sessionUpdate === "tool_call_update" && u.status === "completed");
    assert.ok(done, "the ask_user call completed");
  });

  test("ask_user: a decline is a result the model can act on", async () => {
    const { sessionId } = await agent().newSession(fx.ws.dir);
    answer = () => ({ action: "decline" });
    fx.mock.script(
      reply().toolCall("ask_user", { question: "Tabs or spaces?", choices: ["tabs", "spaces"], multiSelect: true }),
      textReply("Keeping the file's style.").expect((request) => {
        assert.match(lastToolText(request.body.messages), /^The user declined to answer\./);
      }),
    );
    assert.equal((await agent().prompt(sessionId, "format it")).stopReason, "end_turn");
    fx.mock.assertDone();
  });

  test("ask_user: cancelling the turn withdraws the open question", async () => {
    const { sessionId } = await agent().newSession(fx.ws.dir);
    const before = agent().elicitations.length;
    answer = () => "wait";
    fx.mock.script(
      reply().toolCall("ask_user", { question: "Deploy to production?" }),
      textReply("Okay.").expect((request) => {
        assert.equal(request.body.messages.at(-1)?.content, "never mind");
      }),
    );
    const prompt = agent().prompt(sessionId, "deploy");
    await until(() => agent().elicitations.length > before);
    await agent().cancel(sessionId);
    assert.equal((await prompt).stopReason, "cancelled");
    const question = agent().elicitations[before];
    await until(() => question?.withdrawn === true);
    assert.equal((await agent().prompt(sessionId, "never mind")).stopReason, "end_turn");
    fx.mock.assertDone();
  });
});

describe("crow acp: questions when the client cannot answer them (no elicitation capability)", () => {
  const fx = useAcpFixture();

  test("an MCP server's question is declined with a reason, and the turn goes on", async () => {
    const { sessionId } = await fx.agent.newSession(fx.ws.dir, [BOOKING]);
    fx.mock.script(
      reply().toolCall("book_table", {}),
      textReply("Could not book.").expect((request) => {
        const text = lastToolText(request.body.messages);
        assert.match(text, /"action":"decline"/);
        assert.match(text, /"crow\/reason":"no one to ask: the client cannot show the user a question"/);
      }),
    );
    assert.equal((await fx.agent.prompt(sessionId, "book a table")).stopReason, "end_turn");
    fx.mock.assertDone();
    assert.ok(!fx.agent.stdoutLines.some((line) => line.includes("elicitation/create")), "nothing was asked");
  });

  test("ask_user is not offered to the model", async () => {
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    fx.mock.script(
      textReply("Hi.").expect((request) => {
        const names = request.body.tools?.map((t) => t.function.name) ?? [];
        assert.ok(names.includes("todo"), `the built-in tools are offered (${names.join(", ")})`);
        assert.ok(!names.includes("ask_user"), "ask_user is not offered");
      }),
    );
    assert.equal((await fx.agent.prompt(sessionId, "hello")).stopReason, "end_turn");
    fx.mock.assertDone();
  });
});
