/**
 * Subagents over ACP with the spawned `crow acp` and the real crow-mcp: `_crow/subagent` is advertised, answers the
 * child's result and stores the parent link (which `crow sessions show` renders); its bad params are JSON-RPC errors;
 * the `task` tool's child uses the parent's tools and its activity is shown in the task's tool call as it happens.
 * Plus the relay's accumulation of plain progress text (ACP replaces a tool call's content with each update).
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import path from "node:path";
import { describe, test } from "node:test";
import { methods } from "@agentclientprotocol/sdk";
import { openStore } from "@crow/core";
import { CROW_BIN, chunkText, reply, textReply, toolResultText, useAcpFixture } from "@crow/testkit";
import { EventRelay } from "../src/acp/event-relay.js";
import { PROGRESS_TEXT_CHARS } from "../src/acp/translate.js";

describe("tool call progress text in ACP", () => {
  test("plain progress text accumulates into the call's content; a live terminal still wins", () => {
    const relay = new EventRelay(
      () => 1000,
      new Set(),
      () => undefined,
    );
    relay.translate({
      type: "tool_call_pending",
      call: { id: "c1", name: "task", kind: "other", args: {}, rawArguments: "{}", display: { title: "task" } },
    });
    const first = relay.translate({ type: "tool_call_progress", id: "c1", progress: { message: "Reading.\n" } });
    const second = relay.translate({ type: "tool_call_progress", id: "c1", progress: { message: "→ read: /a.ts\n" } });
    assert.equal(toolResultText(first[0]), "Reading.\n");
    assert.equal(toolResultText(second[0]), "Reading.\n→ read: /a.ts\n");
    const terminal = { type: "terminal" as const, terminalId: "t-1" };
    const live = relay.translate({
      type: "tool_call_progress",
      id: "c1",
      progress: { message: "ignored", display: { terminalId: "t-1" } },
    });
    assert.deepEqual(live, [{ sessionUpdate: "tool_call_update", toolCallId: "c1", content: [terminal] }]);
    const long = relay.translate({ type: "tool_call_progress", id: "c1", progress: { message: "x".repeat(9000) } });
    const shown = toolResultText(long[0]);
    assert.equal(shown.length, PROGRESS_TEXT_CHARS + 1, "only the tail is shown");
    assert.ok(shown.startsWith("…x"));
  });
});

describe("crow acp: subagents", () => {
  const fx = useAcpFixture();

  test("initialize advertises _crow/subagent", () => {
    const meta = fx.agent.initialize.agentCapabilities?._meta as { crow?: { methods?: string[] } } | undefined;
    assert.ok(meta?.crow?.methods?.includes("_crow/subagent"));
  });

  test("_crow/subagent answers the child's result; the child is stored under its parent", async () => {
    const { sessionId: parentId } = await fx.agent.newSession(fx.ws.dir);
    fx.mock.script(
      textReply("The child says hi.").expect((req) => {
        assert.equal(req.body.messages.at(-1)?.content, "Say hi.");
      }),
    );
    const answer = (await fx.agent.agent.request("_crow/subagent", {
      cwd: fx.ws.dir,
      prompt: "Say hi.",
      parentSessionId: parentId,
    })) as { sessionId: string; text: string; stopReason: string };
    assert.equal(answer.text, "The child says hi.");
    assert.equal(answer.stopReason, "end_turn");
    assert.notEqual(answer.sessionId, parentId);
    fx.mock.assertDone();

    const store = await openStore(path.join(fx.crowHome, "crow.db"));
    try {
      assert.equal((await store.getSession(answer.sessionId))?.parentId, parentId);
      const children = await store.listSessions({ parentId });
      assert.deepEqual(
        children.sessions.map((s) => s.id),
        [answer.sessionId],
      );
    } finally {
      await store.close();
    }
    // The child is part of its parent: not offered as a session of its own in the editor's picker.
    const listed = await fx.agent.agent.request(methods.agent.session.list, { cwd: fx.ws.dir });
    assert.ok(!listed.sessions.some((s) => s.sessionId === answer.sessionId), "the child is not a top-level session");
    const env: Record<string, string> = {};
    for (const [key, value] of Object.entries(process.env)) {
      if (value !== undefined && !key.startsWith("CROW_") && !key.startsWith("OPENAI_")) env[key] = value;
    }
    const show = spawnSync(process.execPath, [CROW_BIN, "sessions", "show", answer.sessionId], {
      encoding: "utf8",
      env: { ...env, HOME: fx.home, CROW_HOME: fx.crowHome },
    });
    assert.equal(show.status, 0, show.stderr);
    assert.match(show.stdout, new RegExp(`parent session: ${parentId}`));
    assert.match(show.stdout, /The child says hi\./);
  });

  test("_crow/subagent's bad params are JSON-RPC errors", async () => {
    await assert.rejects(
      fx.agent.agent.request("_crow/subagent", { cwd: "rel/dir", prompt: "x" }),
      (error: unknown) => {
        assert.equal((error as { code?: number }).code, -32602);
        assert.match(String((error as Error).message), /cwd must be an absolute path/);
        return true;
      },
    );
    await assert.rejects(
      fx.agent.agent.request("_crow/subagent", { cwd: fx.ws.dir, prompt: "x", parentSessionId: "nope" }),
      /unknown parent session: nope/,
    );
    assert.equal(fx.mock.pending(), 0);
  });

  test("task: the child reads with the parent's tools; its activity shows in the task's tool call", async () => {
    await fx.ws.write("notes.txt", "the launch code is 1234\n");
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    fx.mock.script(
      reply().toolCall(
        "task",
        { description: "Read the notes", prompt: `Read ${fx.ws.path("notes.txt")} and report the launch code.` },
        { id: "call_task" },
      ),
      reply()
        .text("Reading the notes.")
        .toolCall("read", { file_path: fx.ws.path("notes.txt") }, { id: "call_read" }),
      textReply("The launch code is 1234.").expect((req) => {
        assert.match(String(req.body.messages.at(-1)?.content), /the launch code is 1234/);
      }),
      textReply("It is 1234.").expect((req) => {
        assert.match(String(req.body.messages.at(-1)?.content), /^The launch code is 1234\.\n\n\(subagent session/);
      }),
    );
    const turn = await fx.agent.prompt(sessionId, "What is the launch code?");
    assert.equal(turn.stopReason, "end_turn");
    fx.mock.assertDone();
    const forTask = turn.updates.filter((u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === "call_task");
    const progress = forTask.filter((u) => u.sessionUpdate === "tool_call_update" && !u.status).map(toolResultText);
    assert.ok(progress.length > 0, "progress was shown while the child worked");
    const last = progress.at(-1) ?? "";
    assert.match(
      last,
      /^Subagent [\w-]+: Read the notes\nReading the notes\.\n→ read: \/.*notes\.txt\nThe launch code is 1234\.$/,
    );
    const done = forTask.find((u) => u.sessionUpdate === "tool_call_update" && u.status === "completed");
    assert.match(toolResultText(done), /^The launch code is 1234\./);
    // The child's own calls stay in the child: the parent's client saw only the task call.
    assert.deepEqual(
      turn.updates
        .filter((u) => u.sessionUpdate === "tool_call")
        .map((u) => (u.sessionUpdate === "tool_call" ? u.toolCallId : "")),
      ["call_task"],
    );
  });

  test("session/cancel of the parent cancels the child mid-command; both sessions go on with valid histories", async () => {
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    fx.mock.script(
      reply().toolCall("task", { description: "Slow job", prompt: "Run the slow job." }, { id: "call_slow_task" }),
      reply().toolCall("terminal", { command: "sleep 30" }, { id: "call_sleep" }),
    );
    const turn = fx.agent.prompt(sessionId, "Do the slow job");
    const started = await fx.agent.waitForUpdate(sessionId, (u) =>
      /Subagent [\w-]+: Slow job\n→ terminal/.test(toolResultText(u)),
    );
    const childId = /Subagent ([\w-]+):/.exec(toolResultText(started))?.[1] ?? "";
    await fx.agent.cancel(sessionId);
    assert.equal((await turn).stopReason, "cancelled");

    fx.mock.script(textReply("Parent goes on."), textReply("Child goes on."));
    assert.match(chunkText((await fx.agent.prompt(sessionId, "status?")).updates), /Parent goes on\./);
    // The parent's turn does not wait for its cancelled tool call: the child may still be winding down (then loading
    // it is refused as busy). Once loaded, its stored history is complete.
    for (let attempt = 0; ; attempt++) {
      try {
        await fx.agent.agent.request("session/load", { sessionId: childId, cwd: fx.ws.dir, mcpServers: [] });
        break;
      } catch (error) {
        // The refusal's text is in the error's data (the message is "Internal error").
        if (attempt > 200 || !/running a prompt/.test(`${String(error)} ${JSON.stringify(error)}`)) throw error;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    }
    const child = await fx.agent.prompt(childId, "status?");
    assert.equal(child.stopReason, "end_turn");
    assert.match(chunkText(child.updates), /Child goes on\./);
    fx.mock.assertDone();
    const store = await openStore(path.join(fx.crowHome, "crow.db"));
    try {
      const roles = (await store.loadMessages(childId)).map((m) => m.message.role);
      assert.deepEqual(roles, ["user", "assistant", "tool", "user", "assistant"]);
    } finally {
      await store.close();
    }
  });
});
