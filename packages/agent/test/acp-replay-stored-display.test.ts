/**
 * `session/load` replays each tool call with the display stored with its result (migration 0007), against the built
 * `crow acp` and crow-mcp: an edit shows the whole-file diff the live session showed, in a new process. Results
 * stored before displays were kept still replay a diff, rebuilt from the call's arguments, next to newer results
 * that have one.
 */
import assert from "node:assert/strict";
import path from "node:path";
import { describe, test } from "node:test";
import type { SessionUpdate, ToolCallContent } from "@agentclientprotocol/sdk";
import { openStore } from "@crow/core";
import { reply, textReply, useAcpFixture } from "@crow/testkit";
import { replayedUpdates } from "./replay-helpers.js";

/** The diff a finished call's update shows (the first content item of its `tool_call_update`). */
function diffOf(updates: readonly SessionUpdate[], id: string): ToolCallContent | undefined {
  const done = updates.find(
    (u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === id && u.status === "completed",
  );
  return done?.sessionUpdate === "tool_call_update" ? done.content?.find((c) => c.type === "diff") : undefined;
}

describe("crow acp: session/load replays the display stored with each tool result", () => {
  const fx = useAcpFixture({ startAgent: false });

  test("an edit replays the whole-file diff the live session showed, in a new process", async () => {
    const file = fx.ws.path("poem.txt");
    await fx.ws.write("poem.txt", "roses are red\nviolets are blue\n");
    const first = await fx.spawn();
    let sessionId = "";
    let live: SessionUpdate[] = [];
    try {
      ({ sessionId } = await first.newSession(fx.ws.dir));
      fx.mock.script(
        reply().toolCall("edit", { file_path: file, old_string: "blue", new_string: "green" }, { id: "call_e" }),
        textReply("Edited."),
      );
      live = (await first.prompt(sessionId, "make the violets green")).updates;
    } finally {
      await first.close();
    }
    const shownLive = diffOf(live, "call_e");
    assert.deepEqual(shownLive, {
      type: "diff",
      path: file,
      oldText: "roses are red\nviolets are blue\n",
      newText: "roses are red\nviolets are green\n",
    });
    const second = await fx.spawn();
    try {
      const replayed = await replayedUpdates(second, sessionId, fx.ws.dir);
      assert.deepEqual(diffOf(replayed, "call_e"), shownLive);
      const announced = replayed.find((u) => u.sessionUpdate === "tool_call" && u.toolCallId === "call_e");
      assert.equal(announced?.sessionUpdate === "tool_call" && announced.title, `edit: ${file}`);
    } finally {
      await second.close();
    }
  });

  test("results stored before displays were kept replay the diff of their arguments; newer ones their display", async () => {
    const file = fx.ws.path("list.txt");
    await fx.ws.write("list.txt", "one\ntwo\nthree\n");
    const first = await fx.spawn();
    let sessionId = "";
    try {
      ({ sessionId } = await first.newSession(fx.ws.dir));
      fx.mock.script(
        reply().toolCall("edit", { file_path: file, old_string: "two", new_string: "2" }, { id: "call_old" }),
        textReply("Edited."),
      );
      await first.prompt(sessionId, "number two");
    } finally {
      await first.close();
    }
    // The session as a Crow before migration 0007 stored it: no display on its results.
    const store = await openStore(path.join(fx.crowHome, "crow.db"));
    try {
      // The store's Kysely instance (the agent package does not depend on Kysely itself).
      const { db } = store as unknown as {
        db: { updateTable(table: string): { set(values: object): { execute(): Promise<unknown> } } };
      };
      await db.updateTable("messages").set({ display: null }).execute();
    } finally {
      await store.close();
    }
    const second = await fx.spawn();
    try {
      const replayed = await replayedUpdates(second, sessionId, fx.ws.dir);
      assert.deepEqual(diffOf(replayed, "call_old"), { type: "diff", path: file, oldText: "two", newText: "2" });
      fx.mock.script(
        reply().toolCall("edit", { file_path: file, old_string: "three", new_string: "3" }, { id: "call_new" }),
        textReply("Edited."),
      );
      await second.prompt(sessionId, "number three");
    } finally {
      await second.close();
    }
    const third = await fx.spawn();
    try {
      const replayed = await replayedUpdates(third, sessionId, fx.ws.dir);
      assert.deepEqual(diffOf(replayed, "call_old"), { type: "diff", path: file, oldText: "two", newText: "2" });
      assert.deepEqual(diffOf(replayed, "call_new"), {
        type: "diff",
        path: file,
        oldText: "one\n2\nthree\n",
        newText: "one\n2\n3\n",
      });
    } finally {
      await third.close();
    }
  });
});
