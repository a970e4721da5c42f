/**
 * `session/list` over a spawned `crow acp`, as editor clients use it: a session opened and never prompted (an editor
 * opens one at each start) is not offered for resuming, neither by a later process nor by the one that has it open
 * (CodeCompanion's `/resume` offered the chat's own empty session first), and an untitled session has no
 * `"title": null` (a client's resume picker failed on it).
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { methods } from "@agentclientprotocol/sdk";
import { textReply, useAcpFixture } from "@crow/testkit";

describe("crow acp: session/list leaves out sessions never prompted", () => {
  const fx = useAcpFixture();

  test("a never-prompted session is gone from a later process's list; no entry carries title null", async () => {
    const first = await fx.spawn();
    let prompted: string;
    try {
      await first.newSession(fx.ws.dir); // never prompted
      prompted = (await first.newSession(fx.ws.dir)).sessionId;
      fx.mock.script(textReply("Hi."));
      await first.prompt(prompted, "Say hi");
      const live = await first.agent.request(methods.agent.session.list, { cwd: fx.ws.dir });
      assert.deepEqual(
        live.sessions.map((s) => s.sessionId),
        [prompted],
        "the open, never-prompted session is not listed by the process that has it open either",
      );
      for (const entry of live.sessions) assert.notEqual((entry as { title?: unknown }).title, null);
    } finally {
      await first.close();
    }
    const later = await fx.spawn();
    try {
      const listed = await later.agent.request(methods.agent.session.list, { cwd: fx.ws.dir });
      assert.deepEqual(
        listed.sessions.map((s) => [s.sessionId, s.title]),
        [[prompted, "Say hi"]],
      );
    } finally {
      await later.close();
    }
  });
});
