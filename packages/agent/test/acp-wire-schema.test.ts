import assert from "node:assert/strict";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { methods } from "@agentclientprotocol/sdk";
import {
  type AcpClientOptions,
  type AcpTestClient,
  ELICIT_MCP_SERVER,
  type MockLlm,
  reply,
  spawnAcpAgent,
  startMockLlm,
  type TempWorkspace,
  tempWorkspace,
  textReply,
} from "@crow/testkit";
import type { ValidateFunction } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";

/** The schema definition of the params of each method an agent sends (the envelope unions also admit extensions). */
const PARAMS: Record<string, string> = {
  "session/update": "SessionNotification",
  "session/request_permission": "RequestPermissionRequest",
  "fs/read_text_file": "ReadTextFileRequest",
  "fs/write_text_file": "WriteTextFileRequest",
  "terminal/create": "CreateTerminalRequest",
  "terminal/output": "TerminalOutputRequest",
  "terminal/wait_for_exit": "WaitForTerminalExitRequest",
  "terminal/kill": "KillTerminalRequest",
  "terminal/release": "ReleaseTerminalRequest",
  "elicitation/create": "CreateElicitationRequest",
  "elicitation/complete": "CompleteElicitationNotification",
  "$/cancel_request": "CancelRequestNotification",
};

/** The result definition of a response, told by its shape (the wire does not say which request it answers). */
function resultDef(result: Record<string, unknown>): string | undefined {
  if ("protocolVersion" in result) return "InitializeResponse";
  if ("stopReason" in result) return "PromptResponse";
  if ("sessionId" in result) return "NewSessionResponse";
  if ("sessions" in result) return "ListSessionsResponse";
  if ("modes" in result) return "LoadSessionResponse";
  if ("configOptions" in result) return "SetSessionConfigOptionResponse";
  return undefined;
}

/** Validates one line an agent wrote against the ACP SDK's own JSON schema; returns what it was. */
async function wireValidator(): Promise<(message: Record<string, unknown>) => { kind: string; errors?: unknown }> {
  const file = createRequire(import.meta.url).resolve("@agentclientprotocol/sdk/schema/v1/schema.json");
  const schema = JSON.parse(await readFile(file, "utf8")) as Record<string, unknown>;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  // The schema's numeric formats (generated from Rust types).
  const integer = (min: number, max: number) => (n: number) => Number.isInteger(n) && n >= min && n <= max;
  ajv.addFormat("int32", { type: "number", validate: integer(-(2 ** 31), 2 ** 31 - 1) });
  ajv.addFormat("uint16", { type: "number", validate: integer(0, 2 ** 16 - 1) });
  ajv.addFormat("uint32", { type: "number", validate: integer(0, 2 ** 32 - 1) });
  ajv.addFormat("uint64", { type: "number", validate: integer(0, Number.MAX_SAFE_INTEGER) });
  ajv.addFormat("int64", { type: "number", validate: integer(Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER) });
  ajv.addFormat("double", { type: "number", validate: (n: number) => Number.isFinite(n) });
  ajv.addFormat("uri", true);
  ajv.addSchema(schema, "acp");
  const validators = new Map<string, ValidateFunction>();
  const def = (name: string) => {
    let validate = validators.get(name);
    if (!validate) {
      validate = ajv.compile({ $ref: `acp#/$defs/${name}` });
      validators.set(name, validate);
    }
    return validate;
  };
  return (message) => {
    const checks: Array<[string, unknown]> = [];
    let kind: string;
    if (typeof message.method === "string") {
      kind = message.method;
      const params = PARAMS[message.method];
      assert.ok(params, `unexpected method ${message.method}`);
      checks.push([message.id === undefined ? "AgentNotification" : "AgentRequest", message], [params, message.params]);
      const update = (message.params as { update?: { sessionUpdate?: string } }).update?.sessionUpdate;
      if (update) kind = update;
    } else if (message.error !== undefined) {
      kind = "error";
      checks.push(["AgentResponse", message], ["Error", message.error]);
    } else {
      const result = (message.result ?? {}) as Record<string, unknown>;
      const name = resultDef(result);
      kind = name ?? "response";
      checks.push(["AgentResponse", message]);
      if (name) checks.push([name, result]);
    }
    for (const [name, value] of checks) {
      const validate = def(name);
      if (!validate(value)) return { kind, errors: { [name]: validate.errors?.slice(0, 5) } };
    }
    return { kind };
  };
}

/** Validates every line the agents wrote; returns the kinds of message seen and how many were checked. */
async function validateWire(recorded: readonly AcpTestClient[]): Promise<{ kinds: Set<string>; checked: number }> {
  const validate = await wireValidator();
  const kinds = new Set<string>();
  let checked = 0;
  for (const [n, agent] of recorded.entries()) {
    for (const line of agent.stdoutLines) {
      if (line.trim() === "") continue;
      const { kind, errors } = validate(JSON.parse(line) as Record<string, unknown>);
      assert.equal(errors, undefined, `agent ${n + 1} sent an invalid ${kind}: ${line}\n${JSON.stringify(errors)}`);
      kinds.add(kind);
      checked++;
    }
  }
  return { kinds, checked };
}

describe("crow acp: every message of a full session validates against the SDK's JSON schema", () => {
  let mock: MockLlm;
  let ws: TempWorkspace;
  let home: string;
  const agents: AcpTestClient[] = [];
  const spawn = async (extra: Omit<AcpClientOptions, "llmUrl"> = {}) => {
    const agent = await spawnAcpAgent({
      llmUrl: mock.url,
      models: ["mock-model", "other-model"],
      env: { CROW_HOME: home },
      fs: true,
      terminal: true,
      session: { notices: {} },
      permissions: ["allow_once", "allow_always"],
      ...extra,
    });
    agents.push(agent);
    return agent;
  };

  before(async () => {
    mock = await startMockLlm({ models: ["mock-model", "other-model"] });
    ws = await tempWorkspace();
    home = await mkdtemp(path.join(tmpdir(), "crow-home-"));
    // A configured reasoning model next to the environment's: its thought level select goes over the wire too.
    await writeFile(
      path.join(home, "config.yaml"),
      `providers: { local: { base_url: "${mock.url}" } }\nmodels: { thinker: { provider: local, model: mock-model, reasoning_effort: true } }\n`,
    );
  });
  after(async () => {
    for (const agent of agents) await agent.close();
    await mock.close();
    await ws.cleanup();
    await rm(home, { recursive: true, force: true });
  });

  test("new, modes, config options, plan, permissions with fs and terminal, commands, cancel, load", async () => {
    const agent = await spawn();
    const file = await ws.write("app.txt", "one\ntwo\n");
    const { sessionId } = await agent.newSession(ws.dir, [
      { name: "broken", command: path.join(ws.dir, "no-such-server"), args: [], env: [] },
    ]);
    await agent.agent.request(methods.agent.session.setConfigOption, { sessionId, configId: "mode", value: "ask" });
    await agent.agent.request(methods.agent.session.setConfigOption, {
      sessionId,
      configId: "model",
      value: "other-model",
    });
    // Commands go to the editor's terminal only with the sandbox off (else they run in Crow's confined shell).
    await agent.agent.request(methods.agent.session.setConfigOption, { sessionId, configId: "sandbox", value: "off" });
    mock.script(
      reply()
        .reasoning("A plan first.")
        .toolCall("todo", {
          todos: [
            { content: "Edit app.txt", status: "in_progress", priority: "high" },
            { content: "Check it", status: "pending", priority: "medium" },
          ],
        })
        .usage(100, 10),
      reply().toolCall("write", { file_path: file, content: "one\nTWO\n" }),
      reply().toolCall("terminal", { command: "cat app.txt" }),
      reply().toolCall("todo", { todos: [{ content: "Bad", status: "done", priority: "high" }] }),
      textReply("Done: app.txt now says TWO."),
    );
    const turn = await agent.prompt(sessionId, [
      { type: "text", text: "Uppercase the second line of" },
      { type: "resource_link", uri: `file://${file}`, name: "app.txt" },
    ]);
    assert.equal(turn.stopReason, "end_turn");
    assert.equal(await ws.read("app.txt"), "one\nTWO\n");
    await agent.prompt(sessionId, "/help");
    await agent.agent.request(methods.agent.session.setMode, { sessionId, modeId: "code" });
    // A cancelled turn and the prompt right behind it.
    mock.script(reply().text("Long answer").hang(), textReply("Short answer."));
    const cancelled = agent.prompt(sessionId, "long");
    await agent.waitForUpdate(
      sessionId,
      (u) => u.sessionUpdate === "agent_message_chunk" && u.content.type === "text" && u.content.text.includes("Long"),
    );
    await agent.cancel(sessionId);
    assert.equal((await cancelled).stopReason, "cancelled");
    assert.equal((await agent.prompt(sessionId, "short")).stopReason, "end_turn");
    await agent.agent.request(methods.agent.session.setConfigOption, {
      sessionId,
      configId: "model",
      value: "thinker",
    });
    const thought = await agent.agent.request(methods.agent.session.setConfigOption, {
      sessionId,
      configId: "thought_level",
      value: "high",
    });
    assert.ok(thought.configOptions.some((o) => o.category === "thought_level" && o.currentValue === "high"));
    await agent.agent.request(methods.agent.session.list, {});
    await agent.agent.request(methods.agent.session.close, { sessionId });

    const second = await spawn();
    await second.agent.request(methods.agent.session.load, { sessionId, cwd: ws.dir, mcpServers: [] });
    mock.assertDone();

    const validate = await wireValidator();
    // The validator does reject what the protocol does not allow.
    const badPlan = { sessionUpdate: "plan", entries: [{ content: "x", status: "done", priority: "high" }] };
    const bad = validate({ jsonrpc: "2.0", method: "session/update", params: { sessionId, update: badPlan } });
    assert.ok(bad.errors, "an invalid plan entry is refused");
    const { kinds, checked } = await validateWire([agent, second]);
    // The session exercised what editors render (so the validation covered it).
    for (const kind of [
      "plan",
      "config_option_update",
      "current_mode_update",
      "tool_call",
      "tool_call_update",
      "agent_thought_chunk",
      "user_message_chunk",
      "available_commands_update",
      "usage_update",
      "notice",
      "session/request_permission",
      "fs/write_text_file",
      "terminal/create",
      "InitializeResponse",
      "NewSessionResponse",
      "PromptResponse",
      "LoadSessionResponse",
      "SetSessionConfigOptionResponse",
    ]) {
      assert.ok(kinds.has(kind), `the recorded wire has ${kind} (seen: ${[...kinds].join(", ")})`);
    }
    assert.ok(checked > 50, `validated ${checked} messages`);
  });

  test("questions: an MCP server's form and URL questions, ask_user, and a question withdrawn by a cancel", async () => {
    let waiting = false;
    const agent = await spawn({
      elicitation: { form: true, url: true },
      elicit: (request) => {
        if (request.message === "Deploy now?") {
          waiting = true;
          return "wait";
        }
        if (request.mode === "url") return { action: "accept" };
        if (request.message === "Which database?") return { action: "accept", content: { answer: ["postgres"] } };
        return { action: "accept", content: { guests: 2, terrace: false, dishes: ["fish"] } };
      },
    });
    const { sessionId } = await agent.newSession(ws.dir, [
      { name: "booking", command: process.execPath, args: [ELICIT_MCP_SERVER], env: [] },
    ]);
    mock.script(
      reply().toolCall("book_table", {}),
      reply().toolCall("sign_in", {}),
      reply().toolCall("ask_user", { question: "Which database?", choices: ["sqlite", "postgres"], multiSelect: true }),
      textReply("Done."),
      reply().toolCall("ask_user", { question: "Deploy now?" }),
    );
    assert.equal((await agent.prompt(sessionId, "book, sign in, pick a database")).stopReason, "end_turn");
    const cancelled = agent.prompt(sessionId, "deploy");
    while (!waiting) await new Promise((resolve) => setTimeout(resolve, 10));
    await agent.cancel(sessionId);
    assert.equal((await cancelled).stopReason, "cancelled");
    mock.assertDone();

    const validate = await wireValidator();
    const kinds = new Set<string>();
    for (const line of agent.stdoutLines) {
      if (line.trim() === "") continue;
      const { kind, errors } = validate(JSON.parse(line) as Record<string, unknown>);
      assert.equal(errors, undefined, `the agent sent an invalid ${kind}: ${line}\n${JSON.stringify(errors)}`);
      kinds.add(kind);
    }
    for (const kind of ["elicitation/create", "elicitation/complete", "$/cancel_request", "tool_call"]) {
      assert.ok(kinds.has(kind), `the recorded wire has ${kind} (seen: ${[...kinds].join(", ")})`);
    }
    assert.equal(agent.elicitations.length, 4);
  });

  test("additional directories, message ids, $/cancel_request and on/off options, for clients with and without booleans", async () => {
    const extra = await mkdtemp(path.join(tmpdir(), "crow-wire-extra-"));
    try {
      const withBooleans = await spawnAcpAgent({
        llmUrl: mock.url,
        env: { CROW_HOME: home },
        session: { configOptions: { boolean: {} } },
      });
      agents.push(withBooleans);
      const plain = await spawnAcpAgent({ llmUrl: mock.url, env: { CROW_HOME: home } });
      agents.push(plain);

      const { sessionId } = await withBooleans.agent.request(methods.agent.session.new, {
        cwd: ws.dir,
        mcpServers: [],
        additionalDirectories: [extra],
      });
      await assert.rejects(
        withBooleans.agent.request(methods.agent.session.new, {
          cwd: ws.dir,
          mcpServers: [],
          additionalDirectories: ["not/absolute"],
        }),
      );
      await withBooleans.agent.request(methods.agent.session.setConfigOption, {
        sessionId,
        configId: "sandbox",
        type: "boolean",
        value: false,
      });
      mock.script(reply().reasoning("Hm.").text("Answer.", 3));
      await withBooleans.prompt(sessionId, "hello");
      // A prompt cancelled with $/cancel_request (sent raw: its answer is the agent's, not the SDK client's).
      mock.script(reply().text("Long").hang());
      const answered = withBooleans.waitForLine((l) => l.includes('"id":"wire-cancel"'));
      withBooleans.writeRaw(
        JSON.stringify({
          jsonrpc: "2.0",
          id: "wire-cancel",
          method: "session/prompt",
          params: { sessionId, prompt: [{ type: "text", text: "long" }] },
        }),
      );
      await withBooleans.waitForUpdate(
        sessionId,
        (u) => u.sessionUpdate === "agent_message_chunk" && JSON.stringify(u).includes("Long"),
      );
      withBooleans.writeRaw(
        JSON.stringify({ jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: "wire-cancel" } }),
      );
      assert.match(await answered, /"stopReason":"cancelled"/);
      const listed = await withBooleans.agent.request(methods.agent.session.list, {});
      assert.deepEqual(listed.sessions.find((s) => s.sessionId === sessionId)?.additionalDirectories, [extra]);
      await withBooleans.agent.request(methods.agent.session.close, { sessionId });

      // The other client: the switch as a select, and a load that replays message ids.
      await plain.agent.request(methods.agent.session.load, {
        sessionId,
        cwd: ws.dir,
        mcpServers: [],
        additionalDirectories: [extra],
      });
      await plain.agent.request(methods.agent.session.setConfigOption, { sessionId, configId: "sandbox", value: "on" });
      mock.assertDone();

      const { kinds, checked } = await validateWire([withBooleans, plain]);
      for (const kind of [
        "agent_thought_chunk",
        "agent_message_chunk",
        "user_message_chunk",
        "NewSessionResponse",
        "ListSessionsResponse",
        "LoadSessionResponse",
        "SetSessionConfigOptionResponse",
        "PromptResponse",
        "error",
      ]) {
        assert.ok(kinds.has(kind), `the recorded wire has ${kind} (seen: ${[...kinds].join(", ")})`);
      }
      // What this test is about did go over the wire.
      const wire = [...withBooleans.stdoutLines, ...plain.stdoutLines].join("\n");
      for (const piece of ['"messageId":"', '"additionalDirectories":[', '"type":"boolean"', '"currentValue":"on"']) {
        assert.ok(wire.includes(piece), `the wire has ${piece}`);
      }
      assert.ok(checked > 10, `validated ${checked} messages`);
    } finally {
      await rm(extra, { recursive: true, force: true });
    }
  });
});

describe("crow acp: signing in and out validates against the SDK's JSON schema", () => {
  test("initialize offering Terminal Auth, an auth-required session/new, authenticate, logout", async () => {
    const home = await mkdtemp(path.join(tmpdir(), "crow-home-"));
    const agent = await spawnAcpAgent({
      env: { HOME: home, CROW_HOME: home, CROW_MODEL: "", OPENAI_BASE_URL: "" },
      auth: { terminal: true },
    });
    try {
      await assert.rejects(agent.newSession(home), (error: { code?: number }) => error.code === -32000);
      await assert.rejects(
        agent.agent.request(methods.agent.authenticate, { methodId: "crow-init" }),
        (error: { code?: number }) => error.code === -32000,
      );
      await agent.agent.request(methods.agent.logout, {});
      const validate = await wireValidator();
      const kinds = new Set<string>();
      for (const line of agent.stdoutLines) {
        if (line.trim() === "") continue;
        const { kind, errors } = validate(JSON.parse(line) as Record<string, unknown>);
        assert.equal(errors, undefined, `the agent sent an invalid ${kind}: ${line}\n${JSON.stringify(errors)}`);
        kinds.add(kind);
      }
      assert.deepEqual([...kinds].sort(), ["InitializeResponse", "error", "response"]);
      assert.ok(
        agent.stdoutLines.some((line) => line.includes('"type":"terminal"')),
        "the terminal method was sent",
      );
    } finally {
      await agent.close();
      await rm(home, { recursive: true, force: true });
    }
  });
});
