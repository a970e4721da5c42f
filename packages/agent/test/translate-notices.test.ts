// Notices as a client can show them: one builder decides by the client's `session.notices` capability.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { ClientCapabilities } from "@agentclientprotocol/sdk";
import { compactionUpdates } from "../src/acp/compaction-updates.js";
import { sessionEventUpdates } from "../src/acp/events.js";
import { noticeUpdates } from "../src/acp/translate.js";

const showsNotices = { session: { notices: {} } } as unknown as ClientCapabilities;
const notice = { severity: "warning", title: "Crow", description: "the MCP server did not start" } as const;

describe("noticeUpdates", () => {
  test("a client that shows notices gets a notice", () => {
    assert.deepEqual(noticeUpdates(showsNotices, notice, "fallback\n"), [{ sessionUpdate: "notice", ...notice }]);
  });

  test("any other client gets the fallback as agent text, or nothing without one", () => {
    assert.deepEqual(noticeUpdates({}, notice, "fallback\n"), [
      { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "fallback\n" } },
    ]);
    assert.deepEqual(noticeUpdates(undefined, notice), []);
  });

  test("session notices and automatic compactions use it", () => {
    const event = { type: "notice", level: "info", message: "hello" } as const;
    assert.equal(sessionEventUpdates(event, showsNotices)[0]?.sessionUpdate, "notice");
    assert.equal(sessionEventUpdates(event, {})[0]?.sessionUpdate, "agent_message_chunk");
    const failed = { type: "compaction_failed", id: "c1", reason: "threshold", message: "no model" } as const;
    assert.deepEqual(compactionUpdates(failed, showsNotices), [
      { sessionUpdate: "notice", severity: "warning", title: "Compaction failed", description: "no model" },
    ]);
  });
});
