/**
 * A session whose writable directories take in the home directory or the whole filesystem (`crow run --add-dir ~`,
 * ACP `additionalDirectories: ["/"]`) is accepted, since the user asked for it, but never without a word: the
 * sandbox lets its commands change ~/.bashrc and everything else that runs outside it. Through the real `crow run`
 * and `crow acp`.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { methods } from "@agentclientprotocol/sdk";
import { reply, textReply, useAcpFixture } from "@crow/testkit";
import { runCrow, useRunFixture } from "./run-helpers.js";

describe("crow run --add-dir ~: a notice before the first command", { timeout: 120_000 }, () => {
  const fx = useRunFixture();

  test("the home directory as an added root: the notice names it", async () => {
    const home = fx.env.HOME ?? "";
    fx.mock.script(reply().toolCall("terminal", { command: "echo hi" }), textReply("ok"));
    const run = await runCrow(["go", "--add-dir", home], { env: fx.env, cwd: fx.ws.dir });
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /this session may write in .* \(your home directory\)/);
    assert.match(run.stderr, /~\/\.bashrc/);
  });

  test("a project directory alone: no notice", async () => {
    fx.mock.script(textReply("ok"));
    const run = await runCrow(["hi"], { env: fx.env, cwd: fx.ws.dir });
    assert.equal(run.code, 0, run.stderr);
    assert.doesNotMatch(run.stderr, /this session may write in/);
  });
});

describe('crow acp additionalDirectories ["/"]: the session opens with a notice', () => {
  const fx = useAcpFixture();

  test("the notice names the whole filesystem", async () => {
    const { sessionId } = await fx.agent.agent.request(methods.agent.session.new, {
      cwd: fx.ws.dir,
      mcpServers: [],
      additionalDirectories: ["/"],
    });
    const notice = await fx.agent.waitForUpdate(
      sessionId,
      (u) => u.sessionUpdate === "agent_message_chunk" && JSON.stringify(u).includes("this session may write in"),
      true,
    );
    assert.match(JSON.stringify(notice), /\/ \(the whole filesystem\)/);
  });
});
