/**
 * Stored sessions through ACP against the built `crow acp`: session/load replays the history exactly (tool calls,
 * results, the diffs the live session showed) before answering and restores mode/model/cwd; list, resume, close, delete; titles.
 */
import assert from "node:assert/strict";
import path from "node:path";
import { describe, test } from "node:test";
import { methods, type SessionUpdate } from "@agentclientprotocol/sdk";
import { openStore } from "@crow/core";
import { reply, textReply, toolResultText, useAcpFixture } from "@crow/testkit";

describe("crow acp: stored sessions", () => {
  const models = ["mock-model", "other-model"];
  const fx = useAcpFixture({ mock: { models }, agent: { models }, startAgent: false });

  test("initialize advertises loadSession and the session capabilities", async () => {
    const agent = await fx.spawn();
    try {
      const caps = agent.initialize.agentCapabilities;
      assert.equal(caps?.loadSession, true);
      assert.deepEqual(caps?.sessionCapabilities, {
        list: {},
        resume: {},
        close: {},
        delete: {},
        fork: {},
        additionalDirectories: {},
      });
    } finally {
      await agent.close();
    }
  });

  test("load in a new process replays the history with tool calls and diffs, then restores mode, model and cwd", async () => {
    const file = fx.ws.path("notes.txt");
    let sessionId = "";
    let live: SessionUpdate[] = [];
    const first = await fx.spawn();
    try {
      ({ sessionId } = await first.newSession(fx.ws.dir));
      assert.match(sessionId, /^[a-z]+-[a-z]+-[a-z]+-[0-9a-f]{6}$/);
      fx.mock.script(
        reply()
          .reasoning("The user wants a file.")
          .text("Writing it.")
          .toolCall("write", { file_path: file, content: "hello\nworld\n" }, { id: "call_w" }),
        reply().toolCall("edit", { file_path: file, old_string: "world", new_string: "crow" }, { id: "call_e" }),
        textReply("Done: notes.txt says hello crow."),
      );
      const turn = await first.prompt(sessionId, [
        { type: "text", text: "  Create notes.txt\nwith two lines  " },
        { type: "image", mimeType: "image/png", data: "iVBORw0KGgo=" },
      ]);
      assert.equal(turn.stopReason, "end_turn");
      live = turn.updates;
      const title = turn.updates.find((u) => u.sessionUpdate === "session_info_update");
      assert.deepEqual(title?.sessionUpdate === "session_info_update" && title.title, "Create notes.txt");
      await first.agent.request(methods.agent.session.setMode, { sessionId, modeId: "ask" });
      await first.agent.request(methods.agent.session.setConfigOption, {
        sessionId,
        configId: "model",
        value: "other-model",
      });
    } finally {
      await first.close();
    }
    assert.equal(await fx.ws.read("notes.txt"), "hello\ncrow\n");
    const liveDone = (id: string) =>
      live.find((u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === id && u.status === "completed");
    const [writeDone, editDone] = [liveDone("call_w"), liveDone("call_e")];
    const writeText = toolResultText(writeDone);
    const editText = toolResultText(editDone);
    assert.ok(writeText && editText, "the live turn showed both results");
    // What the live turn showed of the edit: the whole file before and after (the toolserver's diff).
    assert.deepEqual(editDone?.sessionUpdate === "tool_call_update" && editDone.content?.[0], {
      type: "diff",
      path: file,
      oldText: "hello\nworld\n",
      newText: "hello\ncrow\n",
    });
    const liveLocations = (done: SessionUpdate | undefined) =>
      done?.sessionUpdate === "tool_call_update" ? done.locations : undefined;

    const second = await fx.spawn();
    try {
      const before = second.notifications.length;
      const movedCwd = await fx.tempDir("crow-moved-");
      const response = await second.agent.request(methods.agent.session.load, {
        sessionId,
        cwd: movedCwd,
        mcpServers: [],
      });
      // Everything replayed arrived before the answer.
      const replayed = second.notifications
        .slice(before)
        .filter((n) => n.sessionId === sessionId)
        .map((n) => n.update)
        .filter((u) => u.sessionUpdate !== "available_commands_update" && u.sessionUpdate !== "session_info_update")
        // Message ids have their own test (acp-message-ids): here, what is shown.
        .map((update) => {
          const { messageId: _id, ...rest } = update as typeof update & { messageId?: unknown };
          return rest;
        });
      const text = (t: string) => ({ type: "text" as const, text: t });
      assert.deepEqual(replayed, [
        { sessionUpdate: "user_message_chunk", content: text("  Create notes.txt\nwith two lines  ") },
        {
          sessionUpdate: "user_message_chunk",
          content: { type: "image", mimeType: "image/png", data: "iVBORw0KGgo=" },
        },
        { sessionUpdate: "agent_thought_chunk", content: text("The user wants a file.") },
        { sessionUpdate: "agent_message_chunk", content: text("Writing it.") },
        {
          sessionUpdate: "tool_call",
          toolCallId: "call_w",
          title: `write: ${file}`,
          kind: "edit",
          status: "pending",
          rawInput: { file_path: file, content: "hello\nworld\n" },
          // The files as the call ended (the stored display), which the live update showed last.
          locations: liveLocations(writeDone),
        },
        // The stored display: exactly what the live update carried (a new file's diff has no old text).
        writeDone,
        {
          sessionUpdate: "tool_call",
          toolCallId: "call_e",
          title: `edit: ${file}`,
          kind: "edit",
          status: "pending",
          rawInput: { file_path: file, old_string: "world", new_string: "crow" },
          locations: liveLocations(editDone),
        },
        // The whole-file diff the live session showed, not the call's old_string → new_string.
        editDone,
        { sessionUpdate: "agent_message_chunk", content: text("Done: notes.txt says hello crow.") },
      ]);
      assert.equal(response.modes?.currentModeId, "ask");
      assert.equal(response.configOptions?.[0]?.currentValue, "other-model");

      // The next prompt carries the whole stored history, on the restored model, and a reused call id stays unique.
      fx.mock.script(
        reply()
          .toolCall("read", { file_path: file }, { id: "call_w" })
          .expect((req) => {
            assert.equal(req.body.model, "other-model");
            const roles = req.body.messages.map((m) => m.role);
            assert.deepEqual(roles, ["system", "user", "assistant", "tool", "assistant", "tool", "assistant", "user"]);
            assert.match(
              String(req.body.messages[0]?.content),
              new RegExp(fx.ws.dir.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")),
            );
          }),
        textReply("It says hello crow."),
      );
      const next = await second.prompt(sessionId, "read it back");
      assert.equal(next.stopReason, "end_turn");
      const call = next.updates.find((u) => u.sessionUpdate === "tool_call");
      assert.equal(call?.sessionUpdate === "tool_call" && call.toolCallId, "call_w#2");
      fx.mock.assertDone();
    } finally {
      await second.close();
    }
  });

  test("list filters by cwd and pages with a cursor; resume reopens without replay; close and delete", async () => {
    const projectA = await fx.tempDir("crow-a-");
    const projectB = await fx.tempDir("crow-b-");
    // Many stored sessions, written straight into the same store the agent uses.
    const store = await openStore(path.join(fx.crowHome, "crow.db"));
    for (let i = 0; i < 60; i++) await store.createSession({ cwd: projectB, title: `old ${i}` });
    await store.close();

    const agent = await fx.spawn();
    try {
      const { sessionId } = await agent.newSession(projectA);
      fx.mock.script(textReply("Hi."));
      await agent.prompt(sessionId, "Fix the login bug please");

      const listA = await agent.agent.request(methods.agent.session.list, { cwd: projectA });
      assert.deepEqual(
        listA.sessions.map((s) => [s.sessionId, s.cwd, s.title]),
        [[sessionId, projectA, "Fix the login bug please"]],
      );
      assert.ok(listA.sessions[0]?.updatedAt);
      assert.equal(listA.nextCursor ?? undefined, undefined);

      const seen = new Set<string>();
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await agent.agent.request(methods.agent.session.list, {
          cwd: projectB,
          ...(cursor ? { cursor } : {}),
        });
        for (const s of page.sessions) seen.add(s.sessionId);
        cursor = page.nextCursor ?? undefined;
        pages++;
      } while (cursor);
      assert.equal(seen.size, 60);
      assert.ok(pages >= 2, "more than one page");
      const all = await agent.agent.request(methods.agent.session.list, {});
      assert.equal(all.sessions[0]?.sessionId, sessionId, "the most recently used session first");

      // close: the session is no longer live, but stays stored.
      await agent.agent.request(methods.agent.session.close, { sessionId });
      await assert.rejects(agent.prompt(sessionId, "still there?"), /not found/i);

      // resume: no replay, and the next prompt has the history.
      const before = agent.notifications.length;
      await agent.agent.request(methods.agent.session.resume, { sessionId, cwd: projectA, mcpServers: [] });
      const replayed = agent.notifications
        .slice(before)
        .filter((n) => ["user_message_chunk", "agent_message_chunk"].includes(n.update.sessionUpdate));
      assert.equal(replayed.length, 0);
      fx.mock.script(
        textReply("Yes.").expect((req) => {
          assert.deepEqual(
            req.body.messages.map((m) => m.content),
            [req.body.messages[0]?.content, "Fix the login bug please", "Hi.", "still there?"],
          );
        }),
      );
      assert.equal((await agent.prompt(sessionId, "still there?")).stopReason, "end_turn");

      // delete: gone from the list and from the store.
      await agent.agent.request(methods.agent.session.delete, { sessionId });
      const after = await agent.agent.request(methods.agent.session.list, { cwd: projectA });
      assert.deepEqual(after.sessions, []);
      await assert.rejects(
        agent.agent.request(methods.agent.session.load, { sessionId, cwd: projectA, mcpServers: [] }),
        /not found/i,
      );
      // The SDK's client resolves close/delete errors as {}: check the wire.
      await agent.agent.request(methods.agent.session.delete, { sessionId });
      const answer = JSON.parse(agent.stdoutLines.findLast((l) => l.includes('"id"')) ?? "{}");
      assert.equal(answer.error?.code, -32002, "deleting an unknown session is an error");
      await assert.rejects(agent.agent.request(methods.agent.session.list, { cursor: "bogus" }), /cursor/i);
      fx.mock.assertDone();
    } finally {
      await agent.close();
    }
  });

  test("a cancelled turn's partial text and cancelled tool call are stored and replayed", async () => {
    let sessionId = "";
    const first = await fx.spawn();
    try {
      ({ sessionId } = await first.newSession(fx.ws.dir));
      fx.mock.script(reply().text("Let me run it.").toolCall("terminal", { command: "sleep 30" }, { id: "call_s" }));
      const prompt = first.prompt(sessionId, "run the slow thing");
      await first.waitForUpdate(sessionId, (u) => u.sessionUpdate === "tool_call_update" && u.status === "in_progress");
      await first.cancel(sessionId);
      assert.equal((await prompt).stopReason, "cancelled");
    } finally {
      await first.close();
    }
    const second = await fx.spawn();
    try {
      const before = second.notifications.length;
      await second.agent.request(methods.agent.session.load, { sessionId, cwd: fx.ws.dir, mcpServers: [] });
      const replayed = second.notifications.slice(before).map((n) => n.update);
      const done = replayed.find((u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === "call_s");
      assert.equal(done?.sessionUpdate === "tool_call_update" && done.status, "failed");
      assert.ok(
        replayed.some(
          (u) =>
            u.sessionUpdate === "agent_message_chunk" &&
            u.content.type === "text" &&
            u.content.text === "Let me run it.",
        ),
      );
      fx.mock.script(textReply("OK."));
      assert.equal((await second.prompt(sessionId, "never mind")).stopReason, "end_turn");
      fx.mock.assertDone();
    } finally {
      await second.close();
    }
  });
});
