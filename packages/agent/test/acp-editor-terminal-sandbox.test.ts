/**
 * An editor that offers its terminal (ACP `terminal/create`, as Toad does) must not be the way around the sandbox: while
 * the session's sandbox is on, the model's commands run in crow-mcp's confined shell, never in the editor's terminal
 * (which runs them unconfined, as the editor's user). Only with the sandbox off do they go to the editor. Attacks
 * from the model's seat through a spawned `crow acp` on real bubblewrap.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, test } from "node:test";
import { methods } from "@agentclientprotocol/sdk";
import { type PermissionChoice, reply, textReply, useAcpFixture } from "@crow/testkit";

function lastToolResult(req: { body: { messages: Array<{ role: string; content?: unknown }> } }): string {
  return String(req.body.messages.filter((m) => m.role === "tool").at(-1)?.content);
}

describe("crow acp with an editor that offers terminals: the sandbox still confines every command", () => {
  const answers: PermissionChoice[] = [];
  const fx = useAcpFixture({
    agent: {
      fs: true,
      terminal: true,
      permissions: () => answers.shift() ?? "reject",
      session: { configOptions: { boolean: {} } },
    },
  });

  test("sandbox on: a write outside the workspace is blocked, and nothing runs in the editor's terminal", async () => {
    const outside = await mkdtemp(path.join("/var/tmp", "crow-editor-term-"));
    try {
      const created = await fx.agent.newSession(fx.ws.dir);
      assert.equal(created.configOptions?.find((o) => o.id === "sandbox")?.currentValue, true);
      fx.mock.script(
        reply().toolCall("terminal", { command: `bash -c "touch ${outside}/planted"; echo inside > in.txt` }),
        textReply("done").expect((req) => {
          const result = lastToolResult(req);
          assert.match(result, /Read-only file system/);
          assert.match(result, /\[Sandbox: /);
        }),
      );
      assert.equal((await fx.agent.prompt(created.sessionId, "plant")).stopReason, "end_turn");
      fx.mock.assertDone();
      assert.equal(existsSync(path.join(outside, "planted")), false, "the command ran unconfined");
      assert.equal(await fx.ws.read("in.txt"), "inside\n", "the workspace stays writable");
      assert.deepEqual(fx.agent.terminalCalls, [], "no command went to the editor's terminal");
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });

  test("sandbox switched off for the session: commands go to the editor's terminal again", async () => {
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    await fx.agent.agent.request(methods.agent.session.setConfigOption, {
      sessionId,
      configId: "sandbox",
      type: "boolean",
      value: false,
    });
    fx.mock.script(
      reply().toolCall("terminal", { command: "echo from-the-editor" }),
      textReply("ok").expect((req) => assert.match(lastToolResult(req), /from-the-editor/)),
    );
    await fx.agent.prompt(sessionId, "run");
    fx.mock.assertDone();
    assert.equal(fx.agent.terminalCalls.length, 1);
    assert.match(fx.agent.terminalCalls[0] ?? "", /from-the-editor/);
  });
});

describe("crow acp with an editor that offers terminals, under sandbox: required", () => {
  const answers: PermissionChoice[] = [];
  const fx = useAcpFixture({
    agent: { terminal: true, permissions: () => answers.shift() ?? "reject" },
    prepare: ({ crowHome }) => writeFile(path.join(crowHome, "config.yaml"), "sandbox: required\nmode: ask\n"),
  });

  test("no unconfined path: not the editor's terminal, and no offer to run a blocked command outside", async () => {
    const outside = await mkdtemp(path.join("/var/tmp", "crow-editor-req-"));
    try {
      const { sessionId } = await fx.agent.newSession(fx.ws.dir);
      // ask mode: the command itself is asked for (allowed once); the escape question must never come.
      answers.push("allow_once", "allow_once");
      fx.mock.script(
        reply().toolCall("terminal", { command: `touch ${outside}/planted` }),
        textReply("done").expect((req) => assert.match(lastToolResult(req), /Read-only file system/)),
      );
      await fx.agent.prompt(sessionId, "plant");
      fx.mock.assertDone();
      assert.equal(existsSync(path.join(outside, "planted")), false, "the command ran unconfined");
      assert.deepEqual(fx.agent.terminalCalls, []);
      assert.equal(answers.length, 1, "exactly one question (the command), no offer to run it outside the sandbox");
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });
});
