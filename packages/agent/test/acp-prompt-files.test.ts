/**
 * The workspace files the system prompt reads (AGENTS.md) are read only as regular files inside the workspace, over a
 * spawned `crow acp` with a scripted model playing the attacker through the real (sandboxed) terminal: an AGENTS.md it
 * links to `/proc/self/environ` (the agent's environment, provider key included: read outside the sandbox, by the
 * agent, when the next session opens) or to a file outside the workspace stays out of the next session's prompt,
 * with a note; a FIFO does not hold the session up; a link to a file inside the workspace still works.
 */
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, test } from "node:test";
import { reply, textReply, useAcpFixture } from "@crow/testkit";

const KEY = "sk-plant-environ-0123456789";

/** The system prompt of the request `req`. */
function systemOf(req: { body: { messages: Array<{ role: string; content?: unknown }> } }): string {
  return String(req.body.messages.find((m) => m.role === "system")?.content ?? "");
}

describe("crow acp: AGENTS.md is read only as a regular file inside the workspace", { timeout: 120_000 }, () => {
  const fx = useAcpFixture({ startAgent: false });

  test("linked to /proc/self/environ, to a file outside, a FIFO: left out of the next prompt; linked inside: read", async () => {
    const { ws, mock } = fx;
    const outside = path.join(await fx.tempDir("crow-outside-"), "private.md");
    await writeFile(outside, "OUTSIDE-PRIVATE-NOTES\n");
    await ws.write("docs/guide.md", "Use tabs, not spaces.\n");
    const agent = await fx.spawn({ env: { OPENAI_API_KEY: KEY } });
    const plants: Array<[string, (system: string) => void]> = [
      [
        "ln -s /proc/self/environ AGENTS.md",
        (system) => {
          assert.doesNotMatch(system, new RegExp(KEY), "the agent's environment is not in the prompt");
          assert.match(system, /AGENTS\.md was left out: it leads outside .*\/proc\/\d+\/environ/);
        },
      ],
      [
        `ln -sf ${outside} AGENTS.md`,
        (system) => {
          assert.doesNotMatch(system, /OUTSIDE-PRIVATE-NOTES/);
          assert.match(system, /AGENTS\.md was left out: it leads outside/);
        },
      ],
      [
        "rm -f AGENTS.md && mkfifo AGENTS.md",
        (system) => assert.match(system, /AGENTS\.md was left out: it is not a regular file/),
      ],
      ["rm -f AGENTS.md && ln -s docs/guide.md AGENTS.md", (system) => assert.match(system, /Use tabs, not spaces\./)],
    ];
    for (const [command, check] of plants) {
      const { sessionId } = await agent.newSession(ws.dir);
      mock.script(reply().toolCall("terminal", { command }), textReply("planted"));
      assert.equal((await agent.prompt(sessionId, "plant it")).stopReason, "end_turn");
      // The next session (or a subagent) reads AGENTS.md again.
      const next = await agent.newSession(ws.dir);
      mock.script(textReply("ok").expect((req) => check(systemOf(req))));
      assert.equal((await agent.prompt(next.sessionId, "hello")).stopReason, "end_turn");
      mock.assertDone();
    }
  });
});
