import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { ChatMessage, LlmClient, PermissionAnswer, PermissionRequest } from "@crow/core";
import { HookBus, installDoomLoopGuard, installPermissions } from "@crow/core/internal";
import { type MockLlm, reply, startMockLlm } from "@crow/testkit";
import { fakeTools, runTurn, testClient, untilAborted } from "./helpers.js";

const ask = (text: string): ChatMessage[] => [{ role: "user", content: text }];
const toolContents = (messages: ChatMessage[]) => messages.filter((m) => m.role === "tool").map((m) => m.content);

describe("permission modes and the doom-loop guard", () => {
  let mock: MockLlm;
  let llm: LlmClient;
  before(async () => {
    mock = await startMockLlm();
    llm = testClient(mock.url);
  });
  after(() => mock.close());

  function setup(answers: PermissionAnswer[], mode: "code" | "ask" | "read-only" = "ask") {
    const bus = new HookBus();
    const asked: PermissionRequest[] = [];
    const permissions = installPermissions(bus, {
      mode,
      askPermission: async (request) => {
        asked.push(request);
        return answers.shift() ?? "reject";
      },
      isReadOnly: (name) => (name === "lookup" ? true : undefined),
    });
    const tools = fakeTools({
      read: () => "file text",
      write: () => "written",
      terminal: () => "ran",
      lookup: () => "found",
      deploy: () => "deployed",
    });
    return { bus, asked, permissions, tools, config: { llm, model: "m", tools, hooks: bus.loopHooks() } };
  }

  test("code mode runs everything without asking", async () => {
    const { asked, tools, config } = setup([], "code");
    mock.script(
      reply().toolCall("write", { file_path: "a", content: "x" }).toolCall("terminal", {}),
      reply().text("ok"),
    );
    await runTurn(ask("go"), config);
    assert.equal(asked.length, 0);
    assert.deepEqual(
      tools.calls.map((c) => c.name),
      ["write", "terminal"],
    );
    mock.assertDone();
  });

  test("ask mode: allow once asks every time, read-only tools never ask", async () => {
    const { asked, tools, config } = setup(["allow_once", "allow_once"]);
    mock.script(
      reply().toolCall("read", {}).toolCall("write", { file_path: "a" }),
      reply().toolCall("write", { file_path: "b" }).toolCall("lookup", {}),
      reply().text("ok"),
    );
    await runTurn(ask("go"), config);
    assert.deepEqual(
      asked.map((r) => [r.call.tool, r.kind]),
      [
        ["write", "edit"],
        ["write", "edit"],
      ],
    );
    assert.deepEqual(
      tools.calls.map((c) => c.name),
      ["read", "write", "write", "lookup"],
    );
    mock.assertDone();
  });

  test("ask mode: allow always is remembered for the session", async () => {
    const { asked, tools, config } = setup(["allow_always"]);
    mock.script(reply().toolCall("crow-mcp_terminal", { command: "ls" }), reply().text("ok"));
    await runTurn(ask("go"), config);
    mock.script(reply().toolCall("terminal", { command: "pwd" }), reply().text("ok"));
    await runTurn(ask("again"), config);
    assert.equal(asked.length, 1);
    assert.equal(tools.calls.length, 2);
    mock.assertDone();
  });

  test("ask mode: reject answers the model and does not run the tool; unknown tools are gated", async () => {
    const { asked, tools, config } = setup(["reject", "reject"]);
    mock.script(reply().toolCall("write", { file_path: "a" }).toolCall("deploy", {}), reply().text("understood"));
    const { stop } = await runTurn(ask("go"), config);
    assert.equal(stop.reason, "end_turn");
    assert.equal(asked.length, 2);
    assert.equal(tools.calls.length, 0);
    for (const content of toolContents(stop.messages)) assert.match(String(content), /rejected/);
    mock.assertDone();
  });

  test("ask mode: a failing permission prompt never means allowed", async () => {
    const bus = new HookBus();
    installPermissions(bus, {
      mode: "ask",
      askPermission: () => Promise.reject(new Error("client went away")),
    });
    const tools = fakeTools({ write: () => "written" });
    mock.script(reply().toolCall("write", {}), reply().text("ok"));
    await runTurn(ask("go"), { llm, model: "m", tools, hooks: bus.loopHooks() });
    assert.equal(tools.calls.length, 0);
    mock.assertDone();
  });

  test("cancel during a permission request returns cancelled with a valid history", async () => {
    const bus = new HookBus();
    const controller = new AbortController();
    installPermissions(bus, {
      mode: "ask",
      askPermission: async ({ signal }) => {
        setTimeout(() => controller.abort(), 10);
        await untilAborted(signal);
        return "cancelled";
      },
    });
    const tools = fakeTools({ read: () => "text", write: () => "written" });
    const config = { llm, model: "m", tools, hooks: bus.loopHooks() };
    mock.script(reply().toolCall("read", {}, { id: "r" }).toolCall("write", {}, { id: "w" }));
    const first = await runTurn(ask("go"), { ...config, signal: controller.signal });
    assert.equal(first.stop.reason, "cancelled");
    assert.deepEqual(
      first.stop.messages.filter((m) => m.role === "tool").map((m) => m.role === "tool" && m.tool_call_id),
      ["r", "w"],
    );
    assert.deepEqual(
      tools.calls.map((c) => c.name),
      ["read"],
    );
    mock.script(reply().text("resumed"));
    await runTurn([...first.history, { role: "user", content: "next" }], config);
    mock.assertDone();
  });

  test("read-only mode refuses mutating tools with a clear result and runs the others; modes switch", async () => {
    const { asked, tools, config, permissions } = setup([], "read-only");
    mock.script(reply().toolCall("write", { file_path: "a" }).toolCall("read", {}), reply().text("ok"));
    const { stop } = await runTurn(ask("go"), config);
    const [refused, read] = toolContents(stop.messages);
    assert.match(String(refused), /read-only mode/);
    assert.equal(read, "file text");
    assert.equal(asked.length, 0);
    permissions.setMode("code");
    assert.equal(permissions.mode, "code");
    mock.script(reply().toolCall("write", { file_path: "a" }), reply().text("ok"));
    await runTurn(ask("go"), config);
    assert.deepEqual(
      tools.calls.map((c) => c.name),
      ["read", "write"],
    );
    assert.equal(permissions.isMutating("crow-mcp_edit"), true);
    assert.equal(permissions.isMutating("lookup"), false);
    mock.assertDone();
  });

  test("doom loop: the third identical call in a row is blocked and the model is told", async () => {
    const bus = new HookBus();
    installDoomLoopGuard(bus);
    const tools = fakeTools({ terminal: () => "same output" });
    const config = { llm, model: "m", tools, hooks: bus.loopHooks() };
    mock.script(
      reply().toolCall("terminal", { command: "make", timeout: 5 }),
      reply().toolCall("terminal", { timeout: 5, command: "make" }),
      reply().toolCall("terminal", { command: "make", timeout: 5 }),
      reply()
        .text("I'll try something else")
        .expect((req) => assert.match(String(req.body.messages.at(-1)?.content), /identical arguments 3 times/)),
    );
    const { stop } = await runTurn(ask("build"), config);
    assert.equal(tools.calls.length, 2);
    assert.equal(stop.reason, "end_turn");
    mock.assertDone();
  });

  test("doom loop: different arguments reset the count, and so does a new turn", async () => {
    const bus = new HookBus();
    installDoomLoopGuard(bus);
    const tools = fakeTools({ terminal: () => "out" });
    const config = { llm, model: "m", tools, hooks: bus.loopHooks() };
    mock.script(
      reply().toolCall("terminal", { command: "a" }),
      reply().toolCall("terminal", { command: "a" }),
      reply().toolCall("terminal", { command: "b" }),
      reply().toolCall("terminal", { command: "a" }),
      reply().text("done"),
    );
    await runTurn(ask("go"), config);
    assert.equal(tools.calls.length, 4);
    mock.script(
      reply().toolCall("terminal", { command: "a" }),
      reply().toolCall("terminal", { command: "a" }),
      reply().text("ok"),
    );
    await runTurn(ask("again"), config);
    assert.equal(tools.calls.length, 6);
    mock.assertDone();
  });
});
