/**
 * `/rewind` over a spawned `crow acp` with a scripted model, real files, the real terminal (sandboxed) and real git:
 * checkpoints per turn in the shadow repository, `_crow/rewind` restoring files byte for byte (edit, `sed -i`, a new
 * file, a deleted one, a mode change, a binary), the conversation going on from before the chosen message, the guard
 * on files the user changed (after the agent's turns, or between two of them), conversation-only and files-only
 * rewinds, and forks rewinding on their own.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { chmod, readFile, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, test } from "node:test";
import type { NewSessionResponse } from "@agentclientprotocol/sdk";
import type { RewindPoint, RewindResult } from "@crow/core";
import { type AcpTestClient, reply, textReply, useAcpFixture } from "@crow/testkit";
import { loadConfig } from "../src/config/index.js";

/** The non-system messages of a request, as `role: text` (tool calls as their names). */
function said(req: { body: { messages: Array<{ role: string; content?: unknown }> } }): string[] {
  return req.body.messages.filter((m) => m.role !== "system").map((m) => `${m.role}: ${String(m.content)}`);
}

function points(agent: AcpTestClient, sessionId: string): Promise<{ points: RewindPoint[] }> {
  return agent.agent.request("_crow/rewind", { sessionId });
}

function rewind(agent: AcpTestClient, params: Record<string, unknown>): Promise<RewindResult> {
  return agent.agent.request("_crow/rewind", params);
}

/** A file's bytes and permission bits, or "absent". */
async function fileState(file: string): Promise<string> {
  try {
    const [bytes, info] = await Promise.all([readFile(file), stat(file)]);
    return `${(info.mode & 0o777).toString(8)}:${bytes.toString("base64")}`;
  } catch {
    return "absent";
  }
}

describe("crow acp: workspace checkpoints and /rewind", () => {
  const fx = useAcpFixture();

  test("three turns (edit, sed -i, new, deleted, chmod, binary) rewound to before turn 1 byte for byte; the conversation goes on from there", async () => {
    const { ws, mock, agent } = fx;
    const names = ["a.txt", "s.txt", "gone.txt", "run.sh", "blob.bin", "new.txt"];
    await writeFile(ws.path("a.txt"), "one\ntwo\n");
    await writeFile(ws.path("s.txt"), "alpha\n");
    await writeFile(ws.path("gone.txt"), "bye\n");
    await writeFile(ws.path("run.sh"), "echo hi\n");
    await chmod(ws.path("run.sh"), 0o644);
    await writeFile(ws.path("blob.bin"), randomBytes(3000));
    const before = await Promise.all(names.map((n) => fileState(ws.path(n))));

    const meta = agent.initialize.agentCapabilities?._meta as { crow?: { methods?: string[] } } | undefined;
    assert.ok(meta?.crow?.methods?.includes("_crow/rewind"), "advertised in initialize");
    const { sessionId } = await agent.newSession(ws.dir);
    mock.script(
      reply()
        .toolCall("edit", { file_path: ws.path("a.txt"), old_string: "two", new_string: "TWO" })
        .toolCall("terminal", { command: "sed -i s/alpha/beta/ s.txt" }),
      textReply("turn one done"),
      reply()
        .toolCall("write", { file_path: ws.path("new.txt"), content: "brand new\n" })
        .toolCall("terminal", { command: "rm gone.txt && chmod +x run.sh" }),
      textReply("turn two done"),
      reply().toolCall("terminal", { command: "head -c 5000 /dev/urandom > blob.bin" }),
      textReply("turn three done"),
    );
    for (const text of ["first", "second", "third"]) {
      assert.equal((await agent.prompt(sessionId, text)).stopReason, "end_turn");
    }
    mock.assertDone();
    assert.equal(await readFile(ws.path("s.txt"), "utf8"), "beta\n", "the terminal's sed -i ran");
    assert.notDeepEqual(await Promise.all(names.map((n) => fileState(ws.path(n)))), before);

    const listed = (await points(agent, sessionId)).points;
    assert.deepEqual(
      listed.map((p) => [p.number, p.text, p.files.map((f) => `${f.status} ${f.path}`).sort()]),
      [
        [1, "first", ["M a.txt", "M s.txt"]],
        [2, "second", ["A new.txt", "D gone.txt", "M run.sh"]],
        [3, "third", ["M blob.bin"]],
      ],
    );

    const first = listed[0];
    assert.ok(first);
    const result = await rewind(agent, { sessionId, seq: first.seq });
    assert.deepEqual(result.restored, ["a.txt", "blob.bin", "gone.txt", "new.txt", "run.sh", "s.txt"]);
    assert.deepEqual(result.conflicts, []);
    assert.equal(result.messagesKept, 0);
    assert.ok(result.archiveId, "the later conversation is archived");
    assert.deepEqual(await Promise.all(names.map((n) => fileState(ws.path(n)))), before, "byte for byte, modes too");

    mock.script(textReply("fresh start").expect((req) => assert.deepEqual(said(req), ["user: fourth"])));
    assert.equal((await agent.prompt(sessionId, "fourth")).stopReason, "end_turn");
    mock.assertDone();
    assert.deepEqual(
      (await points(agent, sessionId)).points.map((p) => p.text),
      ["fourth"],
    );
  });

  test("a file the user changed after the agent's turn is listed and left alone unless overwrite; files-only keeps the conversation", async () => {
    const { ws, mock, agent } = fx;
    const { sessionId } = await agent.newSession(ws.dir);
    mock.script(
      reply().toolCall("write", { file_path: ws.path("mine.txt"), content: "agent\n" }),
      textReply("wrote it"),
      reply().toolCall("write", { file_path: ws.path("other.txt"), content: "agent too\n" }),
      textReply("wrote another"),
    );
    assert.equal((await agent.prompt(sessionId, "write mine")).stopReason, "end_turn");
    assert.equal((await agent.prompt(sessionId, "write other")).stopReason, "end_turn");
    await writeFile(ws.path("mine.txt"), "the user's own edit\n");

    const [first] = (await points(agent, sessionId)).points;
    assert.ok(first);
    const dry = await rewind(agent, { sessionId, seq: first.seq, scope: "files", dryRun: true });
    assert.deepEqual([dry.restored, dry.conflicts], [["other.txt"], ["mine.txt"]]);
    assert.notEqual(await fileState(ws.path("other.txt")), "absent", "a dry run changes nothing");

    const kept = await rewind(agent, { sessionId, seq: first.seq, scope: "files" });
    assert.deepEqual([kept.restored, kept.conflicts], [["other.txt"], ["mine.txt"]]);
    assert.match(kept.message, /Left alone, changed since by someone other than the agent: mine\.txt/);
    assert.equal(await readFile(ws.path("mine.txt"), "utf8"), "the user's own edit\n", "not overwritten");
    assert.equal(await fileState(ws.path("other.txt")), "absent");

    const forced = await rewind(agent, { sessionId, seq: first.seq, scope: "files", overwrite: true });
    assert.deepEqual(forced.restored, ["mine.txt"]);
    assert.equal(await fileState(ws.path("mine.txt")), "absent");

    // Files only: the conversation is whole.
    mock.script(
      textReply("still here").expect((req) =>
        assert.deepEqual(said(req).slice(0, 1).concat(said(req).slice(-1)), ["user: write mine", "user: and now?"]),
      ),
    );
    assert.equal((await agent.prompt(sessionId, "and now?")).stopReason, "end_turn");
    mock.assertDone();
    assert.equal((await points(agent, sessionId)).points.length, 3);
  });

  test("a file the user changed between two agent turns that both touched it is listed and left alone unless overwrite", async () => {
    const { ws, mock, agent } = fx;
    await writeFile(ws.path("both.txt"), "before turn 1\n");
    await writeFile(ws.path("hers.txt"), "before turn 1\n");
    const original = await fileState(ws.path("both.txt"));
    const { sessionId } = await agent.newSession(ws.dir);
    mock.script(
      reply().toolCall("write", { file_path: ws.path("both.txt"), content: "agent 1\n" }),
      textReply("one"),
      reply().toolCall("write", { file_path: ws.path("both.txt"), content: "agent 2\n" }),
      textReply("two"),
    );
    assert.equal((await agent.prompt(sessionId, "write once")).stopReason, "end_turn");
    await writeFile(ws.path("both.txt"), "the user's edit between the turns\n");
    await writeFile(ws.path("hers.txt"), "the user's edit between the turns\n");
    assert.equal((await agent.prompt(sessionId, "write again")).stopReason, "end_turn");
    mock.assertDone();
    const [first] = (await points(agent, sessionId)).points;
    assert.ok(first);

    const kept = await rewind(agent, { sessionId, seq: first.seq, scope: "files" });
    assert.deepEqual([kept.restored, kept.conflicts], [[], ["both.txt"]]);
    assert.equal(await readFile(ws.path("both.txt"), "utf8"), "agent 2\n", "not overwritten silently");
    const text = async (prompt: string) =>
      (await agent.prompt(sessionId, prompt)).updates
        .map((u) => (u.sessionUpdate === "agent_message_chunk" && u.content.type === "text" ? u.content.text : ""))
        .join("");
    assert.match(await text("/rewind 1 files"), /Nothing rewound yet: both\.txt changed since the agent's turn/);
    assert.equal(await readFile(ws.path("both.txt"), "utf8"), "agent 2\n");

    assert.match(await text("/rewind 1 files --overwrite"), /Restored both\.txt\./);
    assert.equal(await fileState(ws.path("both.txt")), original, "its bytes before turn 1");
    assert.equal(
      await readFile(ws.path("hers.txt"), "utf8"),
      "the user's edit between the turns\n",
      "a file the agent never touched is not touched by the rewind",
    );
  });

  test("a conversation-only rewind leaves the files as they are", async () => {
    const { ws, mock, agent } = fx;
    const { sessionId } = await agent.newSession(ws.dir);
    mock.script(
      textReply("hello"),
      reply().toolCall("write", { file_path: ws.path("kept.txt"), content: "kept\n" }),
      textReply("done"),
    );
    await agent.prompt(sessionId, "hi");
    await agent.prompt(sessionId, "write kept");
    const [, second] = (await points(agent, sessionId)).points;
    assert.ok(second);
    const result = await rewind(agent, { sessionId, seq: second.seq, scope: "conversation" });
    assert.deepEqual(result.restored, []);
    assert.equal(result.messagesKept, 2);
    assert.equal(await readFile(ws.path("kept.txt"), "utf8"), "kept\n");
    mock.script(
      textReply("ok").expect((req) => assert.deepEqual(said(req), ["user: hi", "assistant: hello", "user: again"])),
    );
    await agent.prompt(sessionId, "again");
    mock.assertDone();
  });

  test("a fork shares the checkpoints before the fork point and rewinds on its own", async () => {
    const { ws, mock, agent } = fx;
    const { sessionId: source } = await agent.newSession(ws.dir);
    mock.script(
      reply().toolCall("write", { file_path: ws.path("f.txt"), content: "1\n" }),
      textReply("one"),
      reply().toolCall("write", { file_path: ws.path("f.txt"), content: "2\n" }),
      textReply("two"),
    );
    await agent.prompt(source, "set 1");
    await agent.prompt(source, "set 2");
    const fork = await agent.agent.request<NewSessionResponse>("session/fork", {
      sessionId: source,
      cwd: ws.dir,
      mcpServers: [],
    });
    const forkPoints = (await points(agent, fork.sessionId)).points;
    assert.deepEqual(
      forkPoints.map((p) => p.files.map((f) => f.path)),
      [["f.txt"], ["f.txt"]],
      "the fork has the source's checkpoints",
    );
    const second = forkPoints[1];
    assert.ok(second);
    const forked = await rewind(agent, { sessionId: fork.sessionId, seq: second.seq });
    assert.deepEqual(forked.restored, ["f.txt"]);
    assert.equal(await readFile(ws.path("f.txt"), "utf8"), "1\n");
    assert.equal((await points(agent, fork.sessionId)).points.length, 1);

    // The source still has both turns and their checkpoints; its own rewind sees the fork's change as someone else's.
    const sourcePoints = (await points(agent, source)).points;
    assert.equal(sourcePoints.length, 2);
    const [first] = sourcePoints;
    assert.ok(first);
    const guarded = await rewind(agent, { sessionId: source, seq: first.seq, scope: "files" });
    assert.deepEqual(guarded.conflicts, ["f.txt"]);
    const forced = await rewind(agent, { sessionId: source, seq: first.seq, scope: "files", overwrite: true });
    assert.deepEqual(forced.restored, ["f.txt"]);
    assert.equal(await fileState(ws.path("f.txt")), "absent");
  });

  test("/rewind lists the messages with their files and rewinds by number", async () => {
    const { ws, mock, agent } = fx;
    const { sessionId } = await agent.newSession(ws.dir);
    mock.script(reply().toolCall("write", { file_path: ws.path("slash.txt"), content: "x\n" }), textReply("ok"));
    await agent.prompt(sessionId, "make slash.txt");
    const text = async (prompt: string) =>
      (await agent.prompt(sessionId, prompt)).updates
        .map((u) => (u.sessionUpdate === "agent_message_chunk" && u.content.type === "text" ? u.content.text : ""))
        .join("");
    const listing = await text("/rewind");
    assert.match(listing, /1\. make slash\.txt\n\s+changed after: slash\.txt/);
    assert.match(await text("/rewind 7"), /No message 7/);
    await writeFile(ws.path("slash.txt"), "the user's\n");
    const asked = await text("/rewind 1 files");
    assert.match(asked, /Nothing rewound yet: slash\.txt changed since the agent's turn/);
    assert.match(asked, /`\/rewind 1 files --overwrite`.*`\/rewind 1 files --keep`/s);
    assert.equal(await readFile(ws.path("slash.txt"), "utf8"), "the user's\n", "not overwritten without saying so");
    assert.match(await text("/rewind 1 files --keep"), /No files to restore\.\nLeft alone.*: slash\.txt/);
    assert.equal(await readFile(ws.path("slash.txt"), "utf8"), "the user's\n");
    assert.match(await text("/rewind 1 files --overwrite"), /Restored slash\.txt/);
    assert.equal(await fileState(ws.path("slash.txt")), "absent");
  });

  test("config.yaml checkpoints: {enabled: false} takes none (the conversation still rewinds); a wrong key is refused", async () => {
    const { ws, mock } = fx;
    const crowHome = await fx.tempDir("crow-cp-off-");
    await writeFile(path.join(crowHome, "config.yaml"), "checkpoints:\n  enabled: false\n");
    const agent = await fx.spawn({ env: { CROW_HOME: crowHome } });
    try {
      const { sessionId } = await agent.newSession(ws.dir);
      mock.script(reply().toolCall("write", { file_path: ws.path("off.txt"), content: "x\n" }), textReply("ok"));
      await agent.prompt(sessionId, "write off");
      const [first] = (await points(agent, sessionId)).points;
      assert.deepEqual(first?.files, []);
      assert.equal(existsSync(path.join(crowHome, "checkpoints")), false, "no shadow repository");
      const result = await rewind(agent, { sessionId, seq: first?.seq });
      assert.deepEqual([result.restored, result.messagesKept], [[], 0]);
      assert.equal(await readFile(ws.path("off.txt"), "utf8"), "x\n");
    } finally {
      await agent.close();
    }
    await writeFile(path.join(crowHome, "config.yaml"), "checkpoints:\n  max_file: 3\n");
    assert.throws(
      () => loadConfig({ HOME: crowHome, CROW_HOME: crowHome }),
      (error: Error) => {
        assert.match(error.message, /checkpoints\.max_file/);
        assert.match(error.message, /max_file_mb/);
        return true;
      },
    );
  });
});
