import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFile, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, test } from "node:test";
import { methods, type SessionUpdate } from "@agentclientprotocol/sdk";
import { CROW_BIN, type PermissionChoice, reply, tempWorkspace, textReply, useAcpFixture } from "@crow/testkit";

/** The tool results the model got in the request `req` (in call order). */
function toolResults(req: { body: { messages: Array<{ role: string; content?: unknown }> } }): string[] {
  return req.body.messages.filter((m) => m.role === "tool").map((m) => String(m.content));
}

const failedCalls = (updates: SessionUpdate[]) =>
  updates.filter((u) => u.sessionUpdate === "tool_call_update" && u.status === "failed").length;

describe("crow acp: permission rules from config.yaml", () => {
  const answers: PermissionChoice[] = [];
  const fx = useAcpFixture({
    agent: { permissions: () => answers.shift() ?? "reject" },
    async prepare({ crowHome }) {
      await writeFile(
        path.join(crowHome, "config.yaml"),
        [
          "permissions:",
          "  allow: ['terminal(echo *)']",
          "  ask: ['write(src/**)']",
          "  deny: ['terminal(git push*)', 'write(secrets/**)']",
        ].join("\n"),
      );
    },
  });

  async function session(mode: "code" | "ask" | "read-only") {
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    if (mode !== "code") await fx.agent.agent.request(methods.agent.session.setMode, { sessionId, modeId: mode });
    return sessionId;
  }

  test("deny: refused in code mode with a tool error naming the rule, nobody asked, nothing run", async () => {
    const sessionId = await session("code");
    const asked = fx.agent.permissionRequests.length;
    fx.mock.script(
      reply()
        .toolCall("terminal", { command: "touch pushed.txt && git push origin main" })
        .toolCall("write", { file_path: fx.ws.path("secrets/key.txt"), content: "k" }),
      textReply("I will not push.").expect((req) => {
        const [push, secret] = toolResults(req);
        assert.match(push ?? "", /permission rule "terminal\(git push\*\)" \(permissions\.deny in config\.yaml\)/);
        assert.match(secret ?? "", /permission rule "write\(secrets\/\*\*\)"/);
      }),
    );
    const turn = await fx.agent.prompt(sessionId, "push it");
    assert.equal(turn.stopReason, "end_turn");
    assert.equal(failedCalls(turn.updates), 2, "both calls are shown as failed");
    await assert.rejects(fx.ws.read("pushed.txt"), "no part of a denied command runs");
    await assert.rejects(fx.ws.read("secrets/key.txt"));
    assert.equal(fx.agent.permissionRequests.length, asked);
    fx.mock.assertDone();
  });

  test("ask: a matching call asks even in code mode and says why; always is remembered per rule", async () => {
    const sessionId = await session("code");
    answers.push("reject", "allow_always");
    const asked = fx.agent.permissionRequests.length;
    fx.mock.script(
      reply().toolCall("write", { file_path: fx.ws.path("src/a.ts"), content: "a" }),
      reply().toolCall("write", { file_path: fx.ws.path("notes.txt"), content: "n" }),
      reply().toolCall("write", { file_path: fx.ws.path("src/b.ts"), content: "b" }),
      reply().toolCall("write", { file_path: fx.ws.path("src/c.ts"), content: "c" }),
      textReply("done").expect((req) => assert.match(toolResults(req)[0] ?? "", /rejected/)),
    );
    assert.equal((await fx.agent.prompt(sessionId, "write files")).stopReason, "end_turn");
    await assert.rejects(fx.ws.read("src/a.ts"), "the rejected write did not run");
    assert.equal(await fx.ws.read("notes.txt"), "n", "no rule matches: code mode runs it without asking");
    assert.equal(await fx.ws.read("src/b.ts"), "b");
    assert.equal(await fx.ws.read("src/c.ts"), "c", "allowed always for the rule: not asked again");
    const requests = fx.agent.permissionRequests.slice(asked).map((r) => r.request);
    assert.deepEqual(
      requests.map((r) => r.toolCall.rawInput),
      [
        { file_path: fx.ws.path("src/a.ts"), content: "a" },
        { file_path: fx.ws.path("src/b.ts"), content: "b" },
      ],
    );
    const why = requests[0]?.toolCall.content?.find((c) => c.type === "content");
    assert.ok(why?.type === "content" && why.content.type === "text");
    assert.match(why.content.text, /permission rule "write\(src\/\*\*\)"/);
    fx.mock.assertDone();
  });

  test("allow: a matching call runs in ask mode without a question; other mutating calls still ask", async () => {
    const sessionId = await session("ask");
    answers.push("allow_once");
    const asked = fx.agent.permissionRequests.length;
    fx.mock.script(
      reply().toolCall("terminal", { command: "echo allowed-by-rule" }),
      reply().toolCall("terminal", { command: "touch asked.txt" }),
      textReply("ok").expect((req) => assert.match(toolResults(req)[0] ?? "", /allowed-by-rule/)),
    );
    assert.equal((await fx.agent.prompt(sessionId, "run")).stopReason, "end_turn");
    assert.equal(await fx.ws.read("asked.txt"), "");
    const requests = fx.agent.permissionRequests.slice(asked);
    assert.equal(requests.length, 1);
    assert.deepEqual(requests[0]?.request.toolCall.rawInput, { command: "touch asked.txt" });
    fx.mock.assertDone();
  });

  test("read-only: an allow rule does not loosen it", async () => {
    const sessionId = await session("read-only");
    const asked = fx.agent.permissionRequests.length;
    fx.mock.script(
      reply().toolCall("terminal", { command: "echo nope > ro.txt" }),
      // Refused outright, or (with bubblewrap) run in the read-only sandbox, where the write fails.
      textReply("refused").expect((req) =>
        assert.match(toolResults(req)[0] ?? "", /read-only mode|this session is read-only/),
      ),
    );
    assert.equal((await fx.agent.prompt(sessionId, "run")).stopReason, "end_turn");
    await assert.rejects(fx.ws.read("ro.txt"));
    assert.equal(fx.agent.permissionRequests.length, asked);
    fx.mock.assertDone();
  });

  test("doom loop in ask mode: the repeated call asks instead of being blocked", async () => {
    await fx.ws.write("loop.txt", "same\n");
    const sessionId = await session("ask");
    answers.push("allow_once", "reject");
    const asked = fx.agent.permissionRequests.length;
    const read = { file_path: fx.ws.path("loop.txt") };
    fx.mock.script(
      reply().toolCall("read", read),
      reply().toolCall("read", read),
      // Third identical call: asked (allowed once) and run.
      reply().toolCall("read", read),
      // Fourth: asked again (rejected) and blocked with the guard's message.
      reply().toolCall("read", read),
      textReply("I'll stop").expect((req) => {
        const results = toolResults(req);
        assert.equal(results.length, 4);
        assert.match(results[2] ?? "", /same/);
        assert.match(results[3] ?? "", /identical arguments 4 times in a row/);
      }),
    );
    assert.equal((await fx.agent.prompt(sessionId, "read it")).stopReason, "end_turn");
    const requests = fx.agent.permissionRequests.slice(asked).map((r) => r.request);
    assert.equal(requests.length, 2, "reads never ask in ask mode, but repeats do");
    const why = requests[0]?.toolCall.content?.find((c) => c.type === "content");
    assert.ok(why?.type === "content" && why.content.type === "text");
    assert.match(why.content.text, /identical arguments 3 times in a row/);
    fx.mock.assertDone();
  });

  test("doom loop in code mode still blocks without asking", async () => {
    const sessionId = await session("code");
    const asked = fx.agent.permissionRequests.length;
    const read = { file_path: fx.ws.path("loop.txt") };
    fx.mock.script(
      reply().toolCall("read", read),
      reply().toolCall("read", read),
      reply().toolCall("read", read),
      textReply("ok").expect((req) => assert.match(toolResults(req)[2] ?? "", /identical arguments 3 times/)),
    );
    assert.equal((await fx.agent.prompt(sessionId, "read it")).stopReason, "end_turn");
    assert.equal(fx.agent.permissionRequests.length, asked);
    fx.mock.assertDone();
  });
});

describe("crow acp: path rules follow symlinks, command rules ignore extra whitespace", () => {
  let protectedDir = "";
  const fx = useAcpFixture({
    async prepare(fixture) {
      protectedDir = await fixture.tempDir("crow-protected-");
      await writeFile(path.join(protectedDir, "secret.txt"), "top secret\n");
      await symlink(protectedDir, fixture.ws.path("link"));
      const deny = ["write", "edit", "read"].map((tool) => `'${tool}(${protectedDir}/**)'`);
      await writeFile(
        path.join(fixture.crowHome, "config.yaml"),
        `permissions:\n  deny: [${deny.join(", ")}, 'terminal(git push*)']\n`,
      );
    },
  });

  test("write, edit and read through a link into a denied directory are refused; so is `git  push`", async () => {
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    fx.mock.script(
      reply()
        .toolCall("write", { file_path: fx.ws.path("link/new.txt"), content: "planted" })
        .toolCall("edit", { file_path: fx.ws.path("link/secret.txt"), old_string: "top", new_string: "no" })
        .toolCall("read", { file_path: fx.ws.path("link/secret.txt") })
        .toolCall("terminal", { command: "touch pushed.txt; git  \t push origin" }),
      textReply("blocked").expect((req) => {
        const [write, edit, read, push] = toolResults(req);
        assert.match(write ?? "", new RegExp(`permission rule "write\\(${protectedDir}/\\*\\*\\)"`));
        assert.match(edit ?? "", /permission rule "edit\(/);
        assert.match(read ?? "", /permission rule "read\(/);
        assert.doesNotMatch(read ?? "", /top secret/);
        assert.match(push ?? "", /permission rule "terminal\(git push\*\)"/);
      }),
    );
    assert.equal((await fx.agent.prompt(sessionId, "go around the rules")).stopReason, "end_turn");
    assert.equal(await readFile(path.join(protectedDir, "secret.txt"), "utf8"), "top secret\n");
    await assert.rejects(readFile(path.join(protectedDir, "new.txt")), "nothing was written through the link");
    await assert.rejects(fx.ws.read("pushed.txt"), "no part of the denied command ran");
    fx.mock.assertDone();
  });
});

describe("crow acp: an invalid permission rule", () => {
  test("stops the agent before it speaks ACP, naming the file, the key and how to write a rule", async () => {
    const ws = await tempWorkspace();
    try {
      await ws.write("crow-home/config.yaml", "permissions:\n  deny: [terminal, 'terminal(']\n");
      const run = spawnSync(process.execPath, [CROW_BIN, "acp"], {
        encoding: "utf8",
        input: "",
        env: { ...process.env, HOME: ws.path("crow-home"), CROW_HOME: ws.path("crow-home") },
      });
      assert.equal(run.status, 2);
      assert.equal(run.stdout, "", "stdout stays protocol-only");
      assert.match(run.stderr, /config\.yaml: permissions\.deny\[1\]: invalid permission rule "terminal\("/);
      assert.match(run.stderr, /"terminal\(git push\*\)"/);
    } finally {
      await ws.cleanup();
    }
  });
});
