/**
 * `session/load` ends each replayed tool call as its stored error flag says, not by the look of its text: a command
 * that printed "Error: …" and exited 0 completed live and replays completed; a failed call replays failed.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import { reply, textReply, useAcpFixture } from "@crow/testkit";
import { replayedUpdates } from "./replay-helpers.js";

/** The final status of call `id` among `updates`. */
function statusOf(updates: readonly SessionUpdate[], id: string): string | undefined {
  let status: string | undefined;
  for (const u of updates)
    if ((u.sessionUpdate === "tool_call_update" || u.sessionUpdate === "tool_call") && u.toolCallId === id)
      status = u.status ?? status;
  return status;
}

describe("crow acp: session/load replays each call's stored outcome", () => {
  const fx = useAcpFixture({ startAgent: false });

  test("a command printing Error: that exited 0 replays completed; a failed read replays failed", async () => {
    const first = await fx.spawn();
    let sessionId = "";
    let live: SessionUpdate[] = [];
    try {
      ({ sessionId } = await first.newSession(fx.ws.dir));
      fx.mock.script(
        reply()
          .toolCall("terminal", { command: "echo 'Error: only a word'" }, { id: "call_echo" })
          .toolCall("read", { file_path: fx.ws.path("missing.txt") }, { id: "call_missing" }),
        textReply("Done."),
      );
      live = (await first.prompt(sessionId, "run it")).updates;
    } finally {
      await first.close();
    }
    assert.equal(statusOf(live, "call_echo"), "completed");
    assert.equal(statusOf(live, "call_missing"), "failed");
    const second = await fx.spawn();
    try {
      const replayed = await replayedUpdates(second, sessionId, fx.ws.dir);
      assert.equal(statusOf(replayed, "call_echo"), "completed");
      assert.equal(statusOf(replayed, "call_missing"), "failed");
    } finally {
      await second.close();
    }
  });
});
