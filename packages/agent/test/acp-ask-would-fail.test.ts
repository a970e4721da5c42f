/**
 * Ask mode over a spawned `crow acp`: an edit whose dry run already fails (its old_string is not in the file) is not
 * put to the user; the model gets the tool's own message and the file is untouched.
 */
import assert from "node:assert/strict";
import { readFile, writeFile } from "node:fs/promises";
import { describe, test } from "node:test";
import { reply, textReply, useAcpFixture } from "@crow/testkit";

describe("crow acp, ask mode: a call that would fail", () => {
  const fx = useAcpFixture();

  test("an edit whose dry run fails is not asked about; the model gets why", async () => {
    const { ws, mock, agent } = fx;
    await writeFile(ws.path("f.txt"), "one\n");
    const { sessionId } = await agent.newSession(ws.dir);
    await agent.agent.request("session/set_mode", { sessionId, modeId: "ask" });
    const before = agent.permissionRequests.length;
    mock.script(
      reply().toolCall("edit", { file_path: ws.path("f.txt"), old_string: "not there at all", new_string: "x" }),
      textReply("I see.").expect((req) => {
        const last = String(req.body.messages.at(-1)?.content);
        assert.match(last, /^Not run \(its dry run failed, so the user was not asked\): .*not found/is, last);
      }),
    );
    assert.equal((await agent.prompt(sessionId, "edit it")).stopReason, "end_turn");
    assert.equal(agent.permissionRequests.length - before, 0, "no permission question");
    assert.equal(await readFile(ws.path("f.txt"), "utf8"), "one\n");
    mock.assertDone();
  });
});
