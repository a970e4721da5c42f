/**
 * Subagents as ACP child sessions (unstable ACP `subagents`), over the spawned `crow acp` with the scripted model: a
 * client that declares the capability sees each `task` child announced on the parent (`subagent_update`), the task's
 * prompt and answer as `session_message`s, and the child's own activity under the child's session id; a load of the
 * parent replays the children the same way, a child loads by its id, a cancel of the parent stops both. Every line
 * the agent writes validates against the SDK's unstable JSON schema. Clients without the capability keep the task's
 * progress text (acp-subagents.test.ts).
 */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { describe, test } from "node:test";
import type { SessionNotification, SessionUpdate } from "@agentclientprotocol/sdk/unstable";
import { type AcpTestClient, reply, textReply, toolResultText, useAcpFixture } from "@crow/testkit";
import { Ajv2020 } from "ajv/dist/2020.js";
import { runCrow, useRunFixture } from "./run-helpers.js";

/** The recorded notifications with the unstable types (the test client records them with the stable ones). */
const notes = (agent: AcpTestClient) => agent.notifications as readonly SessionNotification[];
const of = (agent: AcpTestClient, sessionId: string): SessionUpdate[] =>
  notes(agent)
    .filter((n) => n.sessionId === sessionId)
    .map((n) => n.update);
const kinds = (updates: SessionUpdate[]) => updates.map((u) => u.sessionUpdate);
const messageText = (u: SessionUpdate | undefined) =>
  u?.sessionUpdate === "session_message"
    ? (u.content ?? []).map((c) => (c.type === "text" ? c.text : "")).join("")
    : "";
const agentText = (updates: SessionUpdate[]) =>
  updates
    .map((u) => (u.sessionUpdate === "agent_message_chunk" && u.content.type === "text" ? u.content.text : ""))
    .join("");

/** Validates every `session/update` and permission request an agent wrote against the SDK's unstable JSON schema. */
async function assertWireValid(agent: AcpTestClient): Promise<number> {
  const file = createRequire(import.meta.url).resolve("@agentclientprotocol/sdk/schema/v1/schema.unstable.json");
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  const integer = (n: number) => Number.isInteger(n);
  for (const format of ["int32", "uint16", "uint32", "uint64", "int64"])
    ajv.addFormat(format, { type: "number", validate: integer });
  ajv.addFormat("double", { type: "number", validate: (n: number) => Number.isFinite(n) });
  ajv.addFormat("uri", true);
  ajv.addSchema(JSON.parse(await readFile(file, "utf8")) as object, "acp");
  const update = ajv.compile({ $ref: "acp#/$defs/SessionNotification" });
  const permission = ajv.compile({ $ref: "acp#/$defs/RequestPermissionRequest" });
  let checked = 0;
  for (const line of agent.stdoutLines) {
    if (!line.trim()) continue;
    const message = JSON.parse(line) as { method?: string; params?: unknown };
    const validate =
      message.method === "session/update"
        ? update
        : message.method === "session/request_permission"
          ? permission
          : undefined;
    if (!validate) continue;
    assert.ok(validate(message.params), `invalid ${message.method}: ${line}\n${JSON.stringify(validate.errors)}`);
    checked++;
  }
  return checked;
}

describe("crow acp: subagents as child sessions (clientCapabilities.subagents)", () => {
  const fx = useAcpFixture({ agent: { subagents: true } });
  let parentId = "";
  let childId = "";

  test("the child is announced on the parent, and its work streams under its own session id", async () => {
    await fx.ws.write("notes.txt", "the launch code is 1234\n");
    ({ sessionId: parentId } = await fx.agent.newSession(fx.ws.dir));
    const prompt = `Read ${fx.ws.path("notes.txt")} and report the launch code.`;
    fx.mock.script(
      reply().toolCall("task", { description: "Read the notes", prompt }, { id: "call_task" }),
      reply()
        .text("Reading the notes.")
        .toolCall("read", { file_path: fx.ws.path("notes.txt") }, { id: "call_read" }),
      textReply("The launch code is 1234."),
      textReply("It is 1234.").expect((req) => {
        assert.match(String(req.body.messages.at(-1)?.content), /^The launch code is 1234\.\n\n\(subagent session/);
      }),
    );
    const turn = await fx.agent.prompt(parentId, "What is the launch code?");
    assert.equal(turn.stopReason, "end_turn");
    fx.mock.assertDone();

    const parent = of(fx.agent, parentId);
    const announce = parent.find((u) => u.sessionUpdate === "subagent_update");
    assert.ok(announce?.sessionUpdate === "subagent_update");
    childId = announce.sessionId;
    assert.notEqual(childId, parentId);
    assert.equal(announce.title, "Read the notes");
    assert.deepEqual(announce.state, { state: "running" });
    assert.deepEqual(announce._meta, { toolCallId: "call_task" });

    // Announced before anything about the child reaches the client.
    const all = notes(fx.agent);
    const announcedAt = all.findIndex((n) => n.update.sessionUpdate === "subagent_update");
    const firstChild = all.findIndex((n) => n.sessionId === childId);
    assert.ok(announcedAt >= 0 && announcedAt < firstChild, "subagent_update comes first");

    // The parent: the prompt to the child, the link on the task call, the child's end and answer; no activity text.
    const toChild = parent.find((u) => u.sessionUpdate === "session_message" && u.recipientSessionId === childId);
    assert.equal(messageText(toChild), prompt);
    const task = parent.filter((u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === "call_task");
    assert.ok(task.some((u) => u.sessionUpdate === "tool_call_update" && u._meta?.subagentSessionId === childId));
    assert.ok(!task.some((u) => /→ read|Reading the notes/.test(toolResultText(u as never))), "no activity text");
    const ended = parent.filter((u) => u.sessionUpdate === "subagent_update" && u.sessionId === childId).at(-1);
    assert.ok(ended?.sessionUpdate === "subagent_update");
    assert.deepEqual(ended.state, { state: "idle", stopReason: "end_turn" });
    const fromChild = parent.find((u) => u.sessionUpdate === "session_message" && u.senderSessionId === childId);
    assert.equal(messageText(fromChild), "The launch code is 1234.");
    assert.deepEqual(
      parent
        .filter((u) => u.sessionUpdate === "tool_call")
        .map((u) => (u.sessionUpdate === "tool_call" ? u.toolCallId : "")),
      ["call_task"],
      "the child's calls are not the parent's",
    );
    assert.match(toolResultText(task.at(-1) as never), /^The launch code is 1234\./);

    // The child: the prompt it received, its text, its own tool call.
    const child = of(fx.agent, childId);
    assert.equal(child[0]?.sessionUpdate, "session_message");
    assert.ok(child[0]?.sessionUpdate === "session_message");
    assert.equal(child[0].senderSessionId, parentId);
    assert.equal(messageText(child[0]), prompt);
    assert.equal(agentText(child), "Reading the notes.The launch code is 1234.");
    const read = child.find((u) => u.sessionUpdate === "tool_call");
    assert.ok(read?.sessionUpdate === "tool_call");
    assert.equal(read.toolCallId, "call_read");
    assert.ok(
      child.some(
        (u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === "call_read" && u.status === "completed",
      ),
    );
    assert.ok((await assertWireValid(fx.agent)) > 10);
  });

  test("a load of the parent replays the child the same way; the child loads by its id", async () => {
    // Closed where it ran first: one live owner per session.
    await fx.agent.agent.request("session/close", { sessionId: parentId });
    const other = await fx.spawn({ subagents: true });
    await other.agent.request("session/load", { sessionId: parentId, cwd: fx.ws.dir, mcpServers: [] });
    const parent = of(other, parentId);
    const announce = parent.find((u) => u.sessionUpdate === "subagent_update");
    assert.ok(announce?.sessionUpdate === "subagent_update");
    assert.equal(announce.sessionId, childId);
    assert.equal(announce.title, "Read the notes");
    assert.deepEqual(announce.state, { state: "idle", stopReason: "end_turn" });
    assert.deepEqual(announce._meta, { toolCallId: "call_task" });
    assert.match(
      messageText(parent.find((u) => u.sessionUpdate === "session_message" && u.recipientSessionId === childId)),
      /^Read .*notes\.txt and report the launch code\.$/,
    );
    assert.equal(
      messageText(parent.find((u) => u.sessionUpdate === "session_message" && u.senderSessionId === childId)),
      "The launch code is 1234.",
    );
    const all = notes(other);
    const announcedAt = all.findIndex((n) => n.update.sessionUpdate === "subagent_update");
    assert.ok(announcedAt < all.findIndex((n) => n.sessionId === childId));
    const child = of(other, childId);
    assert.equal(child[0]?.sessionUpdate, "session_message", "the child's prompt is the message it received");
    assert.equal(agentText(child), "Reading the notes.The launch code is 1234.");
    assert.deepEqual(
      kinds(child).filter((k) => k.startsWith("tool_call")),
      ["tool_call", "tool_call_update"],
    );
    assert.ok((await assertWireValid(other)) > 5);

    // The child on its own: its own history, with its prompt as a user message.
    const third = await fx.spawn({ subagents: true });
    await third.agent.request("session/load", { sessionId: childId, cwd: fx.ws.dir, mcpServers: [] });
    const own = of(third, childId);
    assert.equal(own[0]?.sessionUpdate, "user_message_chunk");
    assert.equal(agentText(own), "Reading the notes.The launch code is 1234.");
    assert.ok(own.some((u) => u.sessionUpdate === "tool_call" && u.toolCallId === "call_read"));
  });

  test("a child's permission question is asked on the parent, about the task call", async () => {
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    await fx.agent.agent.request("session/set_mode", { sessionId, modeId: "ask" });
    const asked = fx.agent.permissionRequests.length;
    fx.mock.script(
      reply().toolCall("task", { description: "Write it", prompt: "Write ok.txt" }, { id: "call_write_task" }),
      reply().toolCall("write", { file_path: fx.ws.path("ok.txt"), content: "ok" }, { id: "call_write" }),
      textReply("Written."),
      textReply("Done."),
    );
    assert.equal((await fx.agent.prompt(sessionId, "write ok.txt")).stopReason, "end_turn");
    assert.equal(await fx.ws.read("ok.txt"), "ok");
    const requests = fx.agent.permissionRequests.slice(asked);
    assert.equal(requests.length, 1);
    assert.equal(requests[0]?.request.sessionId, sessionId);
    assert.equal(requests[0]?.request.toolCall.toolCallId, "call_write_task");
    fx.mock.assertDone();
  });

  test("session/cancel of the parent stops the child too", async () => {
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    fx.mock.script(
      reply().toolCall("task", { description: "Slow job", prompt: "Run the slow job." }, { id: "call_slow_task" }),
      reply().toolCall("terminal", { command: "sleep 30" }, { id: "call_sleep" }),
    );
    const turn = fx.agent.prompt(sessionId, "Do the slow job");
    const started = await fx.agent.waitForUpdate(sessionId, (u) => u.sessionUpdate === ("subagent_update" as never));
    const child = (started as unknown as { sessionId: string }).sessionId;
    await fx.agent.waitForUpdate(
      child,
      (u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === "call_sleep" && u.status === "in_progress",
      true,
    );
    await fx.agent.cancel(sessionId);
    assert.equal((await turn).stopReason, "cancelled");
    const ended = (await fx.agent.waitForUpdate(
      sessionId,
      (u) =>
        u.sessionUpdate === ("subagent_update" as never) &&
        (u as unknown as SessionUpdate & { state?: { state: string } }).state?.state === "idle",
      true,
    )) as unknown as SessionUpdate;
    assert.ok(ended.sessionUpdate === "subagent_update");
    assert.deepEqual(ended.state, { state: "idle", stopReason: "cancelled" });
    const sleep = of(fx.agent, child).filter(
      (u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === "call_sleep",
    );
    const last = sleep.at(-1);
    assert.equal(last?.sessionUpdate === "tool_call_update" && last.status, "failed", "the child's command stopped");
    fx.mock.assertDone();
  });

  test("a child's own child is announced on the child, and streams under its own id", async () => {
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    fx.mock.script(
      reply().toolCall("task", { description: "Outer", prompt: "Delegate further." }, { id: "call_outer" }),
      reply().toolCall("task", { description: "Inner", prompt: "Say deep." }, { id: "call_inner" }),
      textReply("deep"),
      textReply("middle"),
      textReply("top"),
    );
    assert.equal((await fx.agent.prompt(sessionId, "nest")).stopReason, "end_turn");
    fx.mock.assertDone();
    const outer = of(fx.agent, sessionId).find((u) => u.sessionUpdate === "subagent_update");
    assert.ok(outer?.sessionUpdate === "subagent_update");
    assert.equal(outer.title, "Outer");
    const child = of(fx.agent, outer.sessionId);
    const inner = child.find((u) => u.sessionUpdate === "subagent_update");
    assert.ok(inner?.sessionUpdate === "subagent_update", "the grandchild is announced on the child");
    assert.equal(inner.title, "Inner");
    assert.deepEqual(inner._meta, { toolCallId: "call_inner" });
    assert.equal(agentText(of(fx.agent, inner.sessionId)), "deep");
    assert.equal(agentText(child), "middle");
    assert.equal(
      messageText(child.find((u) => u.sessionUpdate === "session_message" && u.senderSessionId === inner.sessionId)),
      "deep",
    );
    assert.ok(
      !of(fx.agent, sessionId).some((u) => u.sessionUpdate === "subagent_update" && u.sessionId === inner.sessionId),
    );
    await assertWireValid(fx.agent);
  });

  test("without the capability, the same task is today's progress text on the task call", async () => {
    const plain = await fx.spawn({ subagents: false });
    const { sessionId } = await plain.newSession(fx.ws.dir);
    fx.mock.script(
      reply().toolCall("task", { description: "Say hi", prompt: "Say hi." }, { id: "call_hi" }),
      textReply("hi"),
      textReply("The child said hi."),
    );
    const turn = await plain.prompt(sessionId, "delegate");
    assert.equal(turn.stopReason, "end_turn");
    const all = notes(plain);
    assert.ok(
      all.every((n) => n.sessionId === sessionId),
      "nothing under another session id",
    );
    assert.ok(
      !all.some((n) =>
        ["subagent_update", "session_message", "session_message_chunk"].includes(n.update.sessionUpdate),
      ),
    );
    const progress = turn.updates
      .filter((u) => u.sessionUpdate === "tool_call_update" && !u.status)
      .map(toolResultText);
    assert.match(progress.at(-1) ?? "", /^Subagent [\w-]+: Say hi\nhi$/);
    fx.mock.assertDone();
  });
});

describe("crow run: a task's child (crow run does not declare subagents: the task call's stream)", () => {
  const fx = useRunFixture();

  test("the task runs its child and the answer reaches stdout", async () => {
    await fx.ws.write("notes.txt", "the launch code is 1234\n");
    fx.mock.script(
      reply().toolCall("task", { description: "Read the notes", prompt: "Read notes.txt." }, { id: "call_task" }),
      reply().toolCall("read", { file_path: fx.ws.path("notes.txt") }, { id: "call_read" }),
      textReply("The launch code is 1234."),
      textReply("It is 1234."),
    );
    const run = await runCrow(["-c", fx.ws.dir, "What is the launch code?"], { env: fx.env });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, "It is 1234.\n");
    // The task call is the parent's one call; the child's read is its own (not shown as the parent's).
    assert.match(run.stderr, /\[done\] task\n/);
    assert.doesNotMatch(run.stderr, /\[done\] read/);
    fx.mock.assertDone();
  });
});
