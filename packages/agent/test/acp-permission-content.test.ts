import assert from "node:assert/strict";
import { access } from "node:fs/promises";
import path from "node:path";
import { describe, test } from "node:test";
import type { SessionUpdate, ToolCallContent } from "@agentclientprotocol/sdk";
import { reply, textReply, useAcpFixture } from "@crow/testkit";

describe("crow acp: in ask mode the person sees the diff or command before allowing it", () => {
  /** Per permission request: the content of that call's updates the client had when it was asked. */
  const shownBefore: Array<ToolCallContent[]> = [];
  const fx = useAcpFixture({
    agent: {
      permissions: (request) => {
        const id = request.toolCall.toolCallId;
        const updates: SessionUpdate[] = fx.agent.updates(request.sessionId);
        shownBefore.push(
          updates.flatMap((u) =>
            (u.sessionUpdate === "tool_call" || u.sessionUpdate === "tool_call_update") && u.toolCallId === id
              ? (u.content ?? [])
              : [],
          ),
        );
        return "allow_once";
      },
    },
  });

  test("write, edit and terminal calls carry their proposal in the question and in the pending call", async () => {
    const file = await fx.ws.write("config.txt", "port = 80\nhost = a\n");
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    await fx.agent.agent.request("session/set_mode", { sessionId, modeId: "ask" });
    fx.mock.script(
      reply().toolCall("write", { file_path: file, content: "port = 8080\nhost = a\n" }),
      reply().toolCall("edit", { file_path: file, old_string: "host = a", new_string: "host = b" }),
      reply().toolCall("terminal", { command: "cat config.txt" }),
      textReply("Done."),
    );
    const turn = await fx.agent.prompt(sessionId, "change the port and host");
    assert.equal(turn.stopReason, "end_turn");
    assert.equal(await fx.ws.read("config.txt"), "port = 8080\nhost = b\n");

    const asked = fx.agent.permissionRequests.map((p) => p.request.toolCall.content ?? []);
    assert.deepEqual(asked, [
      [{ type: "diff", path: file, oldText: "port = 80\nhost = a\n", newText: "port = 8080\nhost = a\n" }],
      // crow-mcp's dry run: the whole file before and after, as the edit would leave it.
      [{ type: "diff", path: file, oldText: "port = 8080\nhost = a\n", newText: "port = 8080\nhost = b\n" }],
      [{ type: "content", content: { type: "text", text: "```sh\ncat config.txt\n```" } }],
    ]);
    // The thread's pending call showed the same before the question came.
    assert.deepEqual(shownBefore, asked);
    fx.mock.assertDone();
  });

  test("a write on a remote toolserver proposes the server's one dry run's diff, not one from the agent's disk", async () => {
    const server = path.join(import.meta.dirname, "fixtures", "remote-write-mcp-server.mjs");
    const file = "/srv/elsewhere/remote-config.txt";
    await assert.rejects(access(file), "the file exists only on the toolserver's side");
    const { sessionId } = await fx.agent.newSession(fx.ws.dir, [
      { name: "remote", command: process.execPath, args: [server], env: [] },
    ]);
    await fx.agent.agent.request("session/set_mode", { sessionId, modeId: "ask" });
    const before = fx.agent.permissionRequests.length;
    fx.mock.script(
      reply().toolCall("remote_write", { file_path: file, content: "before\nremote\n" }),
      textReply("Done.").expect((req) => {
        const last = req.body.messages.at(-1);
        // The proposal wrote nothing, and the one question cost one dry run: the gate ran it, the ACP layer showed it.
        assert.match(String(last?.content), /Successfully wrote .* \(write #1; 1 dry runs so far\)/);
      }),
    );
    assert.equal((await fx.agent.prompt(sessionId, "change the remote config")).stopReason, "end_turn");
    const asked = fx.agent.permissionRequests.slice(before).map((p) => p.request.toolCall.content ?? []);
    assert.deepEqual(asked, [[{ type: "diff", path: file, oldText: "before\n", newText: "before\nremote\n" }]]);
    fx.mock.assertDone();
  });
});
