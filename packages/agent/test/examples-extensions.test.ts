/**
 * examples/extensions/*.mjs loaded through config.yaml into the spawned `crow acp` against the mock LLM: the
 * permission gate refuses `rm -rf` and writes outside the workspace (and lets a write inside through), the git-status
 * injector puts `git status --short` into the request, and the todo extension's tool, slash command and custom method
 * work together.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, test } from "node:test";
import { chunkText, lastToolResult, lastUserText, reply, tempWorkspace, textReply, useAcpFixture } from "@crow/testkit";

const EXAMPLES = path.resolve(import.meta.dirname, "../../../examples/extensions");

describe("examples/extensions through config.yaml", () => {
  const fx = useAcpFixture({
    async prepare({ crowHome }) {
      await writeFile(
        path.join(crowHome, "config.yaml"),
        [
          "extensions:",
          `  - module: ${path.join(EXAMPLES, "permission-gate.mjs")}`,
          "    options: { denyCommands: ['\\bshred\\b'] }",
          `  - module: ${path.join(EXAMPLES, "git-status.mjs")}`,
          "    options: { maxLines: 20 }",
          `  - ${path.join(EXAMPLES, "todo.mjs")}`,
          "",
        ].join("\n"),
      );
    },
  });

  test("all three load: no load errors, the todo method is advertised", () => {
    const meta = fx.agent.initialize.agentCapabilities?._meta as { crow?: { methods?: string[] } } | undefined;
    assert.ok(meta?.crow?.methods?.includes("_todo/list"));
    assert.doesNotMatch(fx.agent.stderr(), /failed to load/);
  });

  test("the permission gate blocks rm -rf, a configured pattern and a write outside the workspace", async () => {
    const outside = await fx.tempDir("crow-outside-");
    const victim = fx.ws.path("victim");
    await mkdir(victim);
    await writeFile(path.join(victim, "keep.txt"), "precious\n");
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    fx.mock.script(
      reply().toolCall("terminal", { command: `rm -rf ${victim}` }),
      reply()
        .toolCall("terminal", { command: `shred -u ${path.join(victim, "keep.txt")}` })
        .expect((request) => assert.match(lastToolResult(request), /^Blocked by the permission gate: "rm -rf /)),
      reply()
        .toolCall("write", { file_path: path.join(outside, "x.txt"), content: "no" })
        .expect((request) => assert.match(lastToolResult(request), /^Blocked by the permission gate: "shred/)),
      reply()
        .toolCall("write", { file_path: fx.ws.path("notes/inside.txt"), content: "yes\n" })
        .expect((request) => assert.match(lastToolResult(request), /is outside the workspace/)),
      textReply("Done.").expect((request) => assert.doesNotMatch(lastToolResult(request), /Blocked/)),
    );
    const result = await fx.agent.prompt(sessionId, "Clean up the victim folder");
    assert.equal(result.stopReason, "end_turn");
    fx.mock.assertDone();
    assert.ok(existsSync(path.join(victim, "keep.txt")), "rm -rf and shred were not run");
    assert.ok(!existsSync(path.join(outside, "x.txt")), "nothing written outside");
    assert.equal(await fx.ws.read("notes/inside.txt"), "yes\n");
  });

  test("the git-status injector adds `git status --short` to the request, not to the stored history", async () => {
    const repo = await tempWorkspace();
    try {
      const git = (...args: string[]) => execFileSync("git", args, { cwd: repo.dir, stdio: "pipe" });
      git("init", "-q", "-b", "main");
      await repo.write("tracked.txt", "one\n");
      git("add", "tracked.txt");
      git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "init");
      await repo.write("tracked.txt", "two\n");
      await repo.write("new.txt", "new\n");
      const { sessionId } = await fx.agent.newSession(repo.dir);
      fx.mock.script(
        textReply("I see.").expect((request) => {
          const user = lastUserText(request);
          assert.ok(user.startsWith("What changed?\n\n<git-status"), user);
          assert.match(user, /## main/);
          assert.match(user, /^ M tracked\.txt$/m);
          assert.match(user, /^\?\? new\.txt$/m);
        }),
        textReply("Still.").expect((request) => {
          // The earlier user message went back to what the user wrote; only the latest carries the status.
          const users = request.body.messages.filter((m) => m.role === "user").map((m) => String(m.content));
          assert.equal(users[0], "What changed?");
          assert.match(users[1] ?? "", /^And now\?\n\n<git-status/);
        }),
      );
      await fx.agent.prompt(sessionId, "What changed?");
      await fx.agent.prompt(sessionId, "And now?");
      fx.mock.assertDone();
    } finally {
      await repo.cleanup();
    }
  });

  test("the todo tool, the /todos command and the _todo/list method share the session's list", async () => {
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    const commands = await fx.agent.waitForUpdate(
      sessionId,
      (u) => u.sessionUpdate === "available_commands_update",
      true,
    );
    assert.ok(
      commands.sessionUpdate === "available_commands_update" &&
        commands.availableCommands.some((c) => c.name === "todos"),
    );
    fx.mock.script(
      reply()
        .toolCall("todo", { action: "add", text: "write the parser" })
        .toolCall("todo", { action: "add", text: "test the parser" }),
      reply()
        .toolCall("todo", { action: "done", number: 1 })
        .expect((request) => assert.equal(lastToolResult(request), "1. [ ] write the parser\n2. [ ] test the parser")),
      reply()
        .toolCall("todo", { action: "done", number: 7 })
        .expect((request) => assert.match(lastToolResult(request), /^1\. \[x\] write the parser/)),
      textReply("Planned.").expect((request) =>
        assert.match(lastToolResult(request), /there is no item 7 \(the list has 2\)/),
      ),
    );
    assert.equal((await fx.agent.prompt(sessionId, "Plan the parser work")).stopReason, "end_turn");
    fx.mock.assertDone();
    assert.equal(
      chunkText((await fx.agent.prompt(sessionId, "/todos")).updates),
      "1. [x] write the parser\n2. [ ] test the parser",
    );
    const listed = await fx.agent.agent.request("_todo/list", { sessionId });
    assert.deepEqual(listed, {
      items: [
        { text: "write the parser", done: true },
        { text: "test the parser", done: false },
      ],
    });
    await assert.rejects(fx.agent.agent.request("_todo/list", {}), /expected \{"sessionId"/);
  });
});
