/**
 * The workspace files the system prompt reads (AGENTS.md) are read only as regular files inside the workspace, over a
 * spawned `crow acp` with a scripted model playing the attacker through the real (sandboxed) terminal: an AGENTS.md it
 * links to `/proc/self/environ` (the agent's environment, provider key included: read outside the sandbox, by the
 * agent, when the next session opens) or to a file outside the workspace stays out of the next session's prompt,
 * with a note; a FIFO does not hold the session up; a link to a file inside the workspace still works. As root and
 * as an unprivileged user (`nobody`, through setpriv; skipped when the tests do not run as root).
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, test } from "node:test";
import { type AcpClientOptions, CROW_BIN, reply, textReply, useAcpFixture } from "@crow/testkit";

const KEY = "sk-plant-environ-0123456789";
const asRoot = process.getuid?.() === 0;

/** The system prompt of the request `req`. */
function systemOf(req: { body: { messages: Array<{ role: string; content?: unknown }> } }): string {
  return String(req.body.messages.find((m) => m.role === "system")?.content ?? "");
}

describe("crow acp: AGENTS.md is read only as a regular file inside the workspace", { timeout: 120_000 }, () => {
  const fx = useAcpFixture({ startAgent: false });

  const plantAndRead = async (name: string, uid: number | undefined) => {
    const { mock } = fx;
    const ws = { dir: fx.ws.path(name), path: (relative: string) => fx.ws.path(path.join(name, relative)) };
    const outside = path.join(await fx.tempDir("crow-outside-"), "private.md");
    await writeFile(outside, "OUTSIDE-PRIVATE-NOTES\n");
    await mkdir(ws.path("docs"), { recursive: true });
    await writeFile(ws.path("docs/guide.md"), "Use tabs, not spaces.\n");
    let options: AcpClientOptions = { env: { OPENAI_API_KEY: KEY } };
    if (uid !== undefined) {
      execFileSync("chown", ["-R", `${uid}:${uid}`, ws.dir, path.dirname(outside), fx.home]);
      const args = [`--reuid=${uid}`, `--regid=${uid}`, "--clear-groups", process.execPath, CROW_BIN, "acp"];
      options = { ...options, command: { file: "setpriv", args } };
    }
    const agent = await fx.spawn(options);
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
    await agent.close();
  };

  test("as root: linked to /proc/self/environ, to a file outside, a FIFO: left out of the next prompt; linked inside: read", async () => {
    await plantAndRead("root", undefined);
  });

  test("as an unprivileged user: the same", { skip: asRoot ? false : "needs root to switch to nobody" }, async () => {
    await plantAndRead("nobody", 65534);
  });
});
