import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, test } from "node:test";
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import { type CapturedRequest, reply, textReply, useAcpFixture } from "@crow/testkit";

/** The text of the tool results the model got in this request (the messages after its last assistant message). */
function toolResults(request: CapturedRequest): string[] {
  return request.body.messages.filter((m) => m.role === "tool").map((m) => String(m.content));
}

function diffs(updates: SessionUpdate[]) {
  return updates.flatMap((u) =>
    u.sessionUpdate === "tool_call_update" ? (u.content ?? []).filter((c) => c.type === "diff") : [],
  );
}

describe("crow acp: with the sandbox off, edit goes through the editor's unsaved buffers", () => {
  /** The editor's modified buffers: what `fs/read_text_file` answers for these paths instead of the disk. */
  const buffers = new Map<string, string>();
  // With the sandbox on, writes and edits go to disk through crow-mcp (acp-sandbox.test.ts): the editor would open
  // the path after Crow's check, which a link swapped meanwhile could steer outside the workspace.
  const fx = useAcpFixture({
    agent: { fs: true, buffers },
    prepare: ({ crowHome }) => writeFile(path.join(crowHome, "config.yaml"), "sandbox: off\n"),
  });

  test("the edit applies to the buffer text, the disk stays as saved, write_text_file gets the edited text", async () => {
    const file = await fx.ws.write("app.py", "def main():\n    print('saved')\n");
    buffers.set(file, "def main():\n    print('unsaved')\n    return 0\n");
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    fx.mock.script(
      reply().toolCall("edit", { file_path: file, old_string: "return 0", new_string: "return 1" }),
      textReply("done").expect((req) => {
        assert.match(toolResults(req).at(-1) ?? "", /^Successfully edited .*app\.py\nReplaced 1 occurrence/);
      }),
    );
    const turn = await fx.agent.prompt(sessionId, "return 1");
    assert.equal(turn.stopReason, "end_turn");
    const edited = "def main():\n    print('unsaved')\n    return 1\n";
    assert.deepEqual(fx.agent.fsWrites.at(-1), { path: file, content: edited });
    assert.equal(buffers.get(file), edited);
    assert.equal(await fx.ws.read("app.py"), "def main():\n    print('saved')\n", "the disk file is untouched");
    assert.deepEqual(diffs(turn.updates), [
      { type: "diff", path: file, oldText: "def main():\n    print('unsaved')\n    return 0\n", newText: edited },
    ]);
    fx.mock.assertDone();
  });

  test("a fuzzy match (different indentation) works on the buffer and says which matcher found it", async () => {
    const file = await fx.ws.write("fuzzy.ts", "");
    buffers.set(file, "class A {\n  run() {\n    go();\n  }\n}\n");
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    fx.mock.script(
      reply().toolCall("edit", {
        file_path: file,
        old_string: "run() {\n  go();\n}",
        new_string: "run() {\n  stop();\n}",
      }),
      textReply("done").expect((req) => assert.match(toolResults(req).at(-1) ?? "", /matcher found/)),
    );
    assert.equal((await fx.agent.prompt(sessionId, "stop")).stopReason, "end_turn");
    assert.equal(buffers.get(file), "class A {\n  run() {\n    stop();\n  }\n}\n");
    fx.mock.assertDone();
  });

  test("no match gives the model crow-mcp's error with the closest lines of the buffer", async () => {
    const file = await fx.ws.write("miss.ts", "const limit = 10;\n");
    buffers.set(file, "const limit = 10;\nconst retries = 3; // typed, not saved\n");
    const writes = fx.agent.fsWrites.length;
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    fx.mock.script(
      reply().toolCall("edit", {
        file_path: file,
        old_string: "const retries = 4; // typed, not saved",
        new_string: "const retries = 5;",
      }),
      textReply("sorry").expect((req) => {
        const result = toolResults(req).at(-1) ?? "";
        assert.match(result, /^Error: old_string not found in file\n/);
        assert.match(
          result,
          /Did you mean line 2 .*\n2\tconst retries = 3; \/\/ typed, not saved\n/,
          "from the buffer",
        );
      }),
    );
    const turn = await fx.agent.prompt(sessionId, "retry 5");
    assert.equal(turn.stopReason, "end_turn");
    assert.ok(turn.updates.some((u) => u.sessionUpdate === "tool_call_update" && u.status === "failed"));
    assert.equal(fx.agent.fsWrites.length, writes, "nothing was written");
    fx.mock.assertDone();
  });

  test("two edits of one buffer in one response (parallel tool calls) both land", async () => {
    const file = await fx.ws.write("pair.txt", "saved\n");
    buffers.set(file, "alpha\nbeta\ngamma\n");
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    fx.mock.script(
      reply()
        .toolCall("edit", { file_path: file, old_string: "alpha", new_string: "ALPHA" })
        .toolCall("edit", { file_path: file, old_string: "gamma", new_string: "GAMMA" }),
      textReply("done").expect((req) => {
        const results = toolResults(req).slice(-2);
        assert.equal(results.length, 2);
        for (const result of results) assert.match(result, /^Successfully edited/);
      }),
    );
    assert.equal((await fx.agent.prompt(sessionId, "capitalize")).stopReason, "end_turn");
    assert.equal(buffers.get(file), "ALPHA\nbeta\nGAMMA\n");
    assert.equal(await fx.ws.read("pair.txt"), "saved\n");
    fx.mock.assertDone();
  });

  test("in ask mode the question shows the whole buffer before and after an edit or a write", async () => {
    const file = await fx.ws.write("ask.txt", "saved\n");
    buffers.set(file, "one\ntwo (unsaved)\nthree\n");
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    await fx.agent.agent.request("session/set_mode", { sessionId, modeId: "ask" });
    const asked = fx.agent.permissionRequests.length;
    fx.mock.script(
      reply().toolCall("edit", { file_path: file, old_string: "two (unsaved)", new_string: "two" }),
      reply().toolCall("write", { file_path: file, content: "one\n" }),
      textReply("done"),
    );
    assert.equal((await fx.agent.prompt(sessionId, "tidy")).stopReason, "end_turn");
    const questions = fx.agent.permissionRequests.slice(asked).map((p) => p.request.toolCall.content);
    assert.deepEqual(questions, [
      [{ type: "diff", path: file, oldText: "one\ntwo (unsaved)\nthree\n", newText: "one\ntwo\nthree\n" }],
      [{ type: "diff", path: file, oldText: "one\ntwo\nthree\n", newText: "one\n" }],
    ]);
    assert.equal(buffers.get(file), "one\n");
    assert.equal(await fx.ws.read("ask.txt"), "saved\n");
    fx.mock.assertDone();
  });
});
