/**
 * `/rewind` after `/compact`, over a spawned `crow acp` with a scripted model, real files and real git: the compaction
 * keeps the first and the last user message, and the checkpoints of every turn stay with the live session (the
 * summarized turns' under the first message), so the files can still be put back.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { describe, test } from "node:test";
import { chunkText, reply, textReply, useAcpFixture } from "@crow/testkit";

describe("crow acp: /rewind after /compact", () => {
  const fx = useAcpFixture();

  test("/rewind lists the files of every turn after /compact and /rewind 1 both restores them", async () => {
    const { ws, mock, agent } = fx;
    await writeFile(ws.path("b.txt"), "b original\n");
    const { sessionId } = await agent.newSession(ws.dir);
    mock.script(
      reply().toolCall("write", { file_path: ws.path("a.txt"), content: "agent a\n" }),
      textReply("wrote a"),
      reply().toolCall("edit", { file_path: ws.path("b.txt"), old_string: "original", new_string: "edited" }),
      textReply("edited b"),
      reply().toolCall("write", { file_path: ws.path("c.txt"), content: "agent c\n" }),
      textReply("wrote c"),
    );
    for (const text of ["write a", "edit b", "write c"]) {
      assert.equal((await agent.prompt(sessionId, text)).stopReason, "end_turn");
    }
    mock.script(textReply("SUMMARY: a.txt written, b.txt edited."));
    assert.match(chunkText((await agent.prompt(sessionId, "/compact")).updates), /Compacted the conversation/);
    mock.assertDone();

    const listed = chunkText((await agent.prompt(sessionId, "/rewind")).updates);
    assert.match(listed, /^Messages you can rewind to \(to just before one\):\n\n1\. write a\n/, listed);
    assert.match(listed, /1\. write a\s+changed after: a\.txt, b\.txt/, listed);
    assert.match(listed, /\n\nType `\/rewind N /, listed);
    assert.match(listed, /2\. write c\s+changed after: c\.txt/, listed);

    const rewound = chunkText((await agent.prompt(sessionId, "/rewind 1 both")).updates);
    assert.match(rewound, /Restored a\.txt, b\.txt, c\.txt\./, rewound);
    assert.equal(existsSync(ws.path("a.txt")) || existsSync(ws.path("c.txt")), false);
    assert.equal(await readFile(ws.path("b.txt"), "utf8"), "b original\n");
  });

  test("/rewind to the kept last message after /compact restores that turn's files only", async () => {
    const { ws, mock, agent } = fx;
    const { sessionId } = await agent.newSession(ws.dir);
    mock.script(
      reply().toolCall("write", { file_path: ws.path("x.txt"), content: "x\n" }),
      textReply("wrote x"),
      textReply("just talk"),
      reply().toolCall("write", { file_path: ws.path("y.txt"), content: "y\n" }),
      textReply("wrote y"),
      textReply("SUMMARY"),
    );
    for (const text of ["write x", "talk", "write y", "/compact"]) await agent.prompt(sessionId, text);
    mock.assertDone();
    const rewound = chunkText((await agent.prompt(sessionId, "/rewind 2 files")).updates);
    assert.match(rewound, /Restored y\.txt\./, rewound);
    assert.equal(existsSync(ws.path("y.txt")), false);
    assert.equal(await readFile(ws.path("x.txt"), "utf8"), "x\n", "the earlier turn's file stays");
  });

  test("/help and /rewind answer in Markdown blocks (a list, blank lines between), not lines an editor runs together", async () => {
    const { ws, agent } = fx;
    const { sessionId } = await agent.newSession(ws.dir);
    const help = chunkText((await agent.prompt(sessionId, "/help")).updates);
    assert.match(help, /^Available commands:\n\n- \/\w+ - .+\n- \/\w+ - /, help);
    const listed = chunkText((await agent.prompt(sessionId, "/rewind")).updates);
    assert.match(listed, /Nothing to rewind/, listed);
  });
});
