/**
 * A finished edit over a spawned `crow acp`, as an editor shows it: the diff once (the diff block), and the text the
 * model got without the same diff again, and no rawOutput repeating both.
 */
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import { describe, test } from "node:test";
import { reply, textReply, useAcpFixture } from "@crow/testkit";

describe("crow acp: a finished edit's diff", () => {
  const fx = useAcpFixture();

  test("is in the diff block only, not also in the text content", async () => {
    const { ws, mock, agent } = fx;
    await writeFile(ws.path("f.txt"), "one\ntwo\nthree\n");
    const { sessionId } = await agent.newSession(ws.dir);
    mock.script(
      reply().toolCall("edit", { file_path: ws.path("f.txt"), old_string: "two", new_string: "TWO" }),
      textReply("done"),
    );
    const turn = await agent.prompt(sessionId, "edit it");
    assert.equal(turn.stopReason, "end_turn");
    const finished = turn.updates.find((u) => u.sessionUpdate === "tool_call_update" && u.status === "completed");
    assert.ok(finished && finished.sessionUpdate === "tool_call_update", JSON.stringify(turn.updates));
    const kinds = (finished.content ?? []).map((c) => c.type);
    assert.deepEqual(kinds, ["diff", "content"]);
    const text = (finished.content ?? []).flatMap((c) =>
      c.type === "content" && c.content.type === "text" ? [c.content.text] : [],
    );
    assert.match(text.join(""), /^Successfully edited .*f\.txt\nReplaced 1 occurrence \(exact match\)\.$/);
    assert.doesNotMatch(text.join(""), /^[-+]{3} |@@/m);
    // Nor beside it in rawOutput, which clients such as acpx print too (the text and the diff again).
    assert.equal(finished.rawOutput, undefined, JSON.stringify(finished.rawOutput));
    mock.assertDone();
  });
});
