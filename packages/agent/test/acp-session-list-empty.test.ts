/**
 * `session/list` over a spawned `crow acp`, as editor clients use it: a session opened and never prompted (an editor
 * opens one at each start) is not offered for resuming by a later process, and an untitled session has no
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
    let idle: string;
    try {
      idle = (await first.newSession(fx.ws.dir)).sessionId;
      prompted = (await first.newSession(fx.ws.dir)).sessionId;
      fx.mock.script(textReply("Hi."));
      await first.prompt(prompted, "Say hi");
      const live = await first.agent.request(methods.agent.session.list, { cwd: fx.ws.dir });
      const idleEntry = live.sessions.find((s) => s.sessionId === idle);
      assert.ok(idleEntry, "still listed by the process that has it open");
      assert.equal("title" in idleEntry, false, JSON.stringify(idleEntry));
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
