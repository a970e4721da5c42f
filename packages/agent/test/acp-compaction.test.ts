/**
 * Compaction, /clear and the versioned system prompt end to end: the built `crow acp` with the mock LLM and a
 * SQLite store in a private CROW_HOME. Each test reads the store the agent wrote to check what was kept and archived.
 */
import assert from "node:assert/strict";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { type ChatMessage, openStore, type Store } from "@crow/core";
import { reproduceSystemPrompt } from "@crow/core/internal";
import {
  type CapturedRequest,
  chunkText,
  httpError,
  type MockMessage,
  reply,
  textReply,
  useAcpFixture,
} from "@crow/testkit";

interface CompactResponse {
  compacted: boolean;
  message: string;
  summary?: string;
  archiveId?: string;
  messagesBefore?: number;
  messagesAfter?: number;
}

/** A request's messages as `role: text` lines (tool calls as `name(args)`), for readable comparisons. */
function shape(messages: readonly MockMessage[]): string[] {
  return messages.map((m) => {
    if (m.role === "system") return "system";
    if (m.tool_calls?.length) return `assistant: ${m.tool_calls.map((c) => c.function.name).join(",")}()`;
    const text = typeof m.content === "string" ? m.content : JSON.stringify(m.content);
    return `${m.role}: ${text}`;
  });
}

/** The summarizer request: no tools, a system message and one user message carrying the transcript. */
function assertSummarizerRequest(request: CapturedRequest, mustContain: RegExp[]): void {
  assert.equal(request.body.tools, undefined, "the summarizer gets no tools");
  assert.deepEqual(
    request.body.messages.map((m) => m.role),
    ["system", "user"],
  );
  const prompt = String(request.body.messages[1]?.content);
  for (const re of mustContain) assert.match(prompt, re);
}

const plain = (message: ChatMessage) =>
  message.role === "tool" ? `tool: ${String(message.content)}` : shape([message as MockMessage])[0];

describe("crow acp: compaction, /clear and the system prompt", () => {
  let store: Store;
  const fx = useAcpFixture({
    agent: { env: { CROW_MAX_COMPACT_TOKENS: "1000" } },
    async prepare({ ws }) {
      await ws.write("AGENTS.md", "Use tabs, never spaces.\n");
      await ws.write("src/main.ts", "export {};\n");
    },
  });

  /** Two finished turns: a tool call in the first, plain text in the second. */
  async function twoTurns(sessionId: string, file: string): Promise<void> {
    fx.mock.script(
      reply().toolCall("write", { file_path: file, content: "one\n" }),
      textReply("Wrote it."),
      textReply("It has one line."),
    );
    assert.equal((await fx.agent.prompt(sessionId, `Create ${file}`)).stopReason, "end_turn");
    assert.equal((await fx.agent.prompt(sessionId, "How many lines?")).stopReason, "end_turn");
  }

  before(async () => {
    store = await openStore(path.join(fx.crowHome, "crow.db"));
  });
  after(async () => {
    await store.close();
  });

  test("a new session's system prompt is rendered from a stored prompt version and reproducible", async () => {
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    fx.mock.script(textReply("hello"));
    await fx.agent.prompt(sessionId, "hi");
    const sent = String(fx.mock.requests.at(-1)?.body.messages[0]?.content);
    assert.ok(sent.includes(fx.ws.dir));
    assert.match(sent, /Use tabs, never spaces\./, "AGENTS.md is in the prompt");
    assert.match(sent, /\n {4}main\.ts\n/, "the directory tree is in the prompt");
    const record = await store.getSession(sessionId);
    assert.ok(record);
    assert.match(record.promptId ?? "", /^system_prompt@\d+$/);
    assert.equal(record.promptArgs?.workspace, fx.ws.dir);
    assert.equal(record.systemPrompt, sent, "the stored text is what was sent");
    assert.equal(await reproduceSystemPrompt(store, record), sent);
    fx.mock.assertDone();
  });

  test("crossing MAX_COMPACT_TOKENS compacts before the next turn; the store keeps the summary and archives the original", async () => {
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    const file = fx.ws.path("a.txt");
    fx.mock.script(
      reply().toolCall("write", { file_path: file, content: "alpha\n" }).usage(400, 10),
      textReply("Created a.txt.").usage(1500, 10),
    );
    await fx.agent.prompt(sessionId, "Create a.txt with alpha");
    const summary = "## Summary\nYou created /a.txt containing `alpha`. Nothing else is pending.";
    fx.mock.script(
      textReply(summary).expect((req) =>
        assertSummarizerRequest(req, [
          /FIRST USER MESSAGE[^\n]*\nCreate a\.txt with alpha/,
          /→ called write\(/,
          /\[write result\]/,
          /Created a\.txt\./,
          /LATEST USER MESSAGE[^\n]*\nNow add beta/,
        ]),
      ),
      textReply("Added beta.").expect((req) => {
        assert.deepEqual(shape(req.body.messages), [
          "system",
          "user: Create a.txt with alpha",
          `assistant: ${summary}`,
          "user: Now add beta",
        ]);
      }),
    );
    const turn = await fx.agent.prompt(sessionId, "Now add beta");
    assert.equal(turn.stopReason, "end_turn");
    assert.match(
      chunkText(turn.updates),
      /Compacted the conversation because the context was getting full: 5 messages → 3/,
    );
    assert.match(chunkText(turn.updates), /Added beta\./);
    fx.mock.assertDone();

    const stored = (await store.loadMessages(sessionId)).map((m) => m.message);
    assert.deepEqual(stored.map(plain), [
      "user: Create a.txt with alpha",
      `assistant: ${summary}`,
      "user: Now add beta",
      "assistant: Added beta.",
    ]);
    assert.notEqual(stored[1]?.content, "content", "upstream stored the literal word 'content'");
    const archives = await store.listArchives(sessionId);
    assert.equal(archives.length, 1);
    const original = (await store.loadMessages(archives[0]?.id ?? "")).map((m) => m.message);
    assert.deepEqual(original.map(plain), [
      "user: Create a.txt with alpha",
      "assistant: write()",
      `tool: ${String(original[2]?.content)}`,
      "assistant: Created a.txt.",
      "user: Now add beta",
    ]);
    assert.match(String(original[2]?.content), /a\.txt/);
    // The client's session id did not change and lists once.
    const listed = await store.listSessions({ cwd: fx.ws.dir });
    assert.equal(listed.sessions.filter((s) => s.id === sessionId).length, 1);
    assert.ok(!listed.sessions.some((s) => s.id === archives[0]?.id), "archives are not listed");
  });

  test("/compact summarizes on request and the next prompt carries the compacted history", async () => {
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    await twoTurns(sessionId, fx.ws.path("b.txt"));
    fx.mock.script(
      textReply("SUMMARY-B: b.txt was written with one line.").expect((req) =>
        assertSummarizerRequest(req, [/→ called write/]),
      ),
    );
    const compact = await fx.agent.prompt(sessionId, "/compact");
    assert.equal(compact.stopReason, "end_turn");
    assert.match(chunkText(compact.updates), /Compacted the conversation: 6 messages → 4 .*archived as /s);
    fx.mock.script(
      textReply("Sure.").expect((req) => {
        assert.deepEqual(shape(req.body.messages), [
          "system",
          `user: Create ${fx.ws.path("b.txt")}`,
          "assistant: SUMMARY-B: b.txt was written with one line.",
          "user: How many lines?",
          "assistant: It has one line.",
          "user: Thanks",
        ]);
      }),
    );
    await fx.agent.prompt(sessionId, "Thanks");
    fx.mock.assertDone();
    assert.equal((await store.listArchives(sessionId)).length, 1);
  });

  test("/compact with nothing to summarize says so without calling the model; /help lists every command", async () => {
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    const before = fx.mock.requests.length;
    const compact = await fx.agent.prompt(sessionId, "/compact");
    assert.match(chunkText(compact.updates), /Nothing to compact/);
    const help = await fx.agent.prompt(sessionId, "/help");
    for (const name of ["/compact", "/clear", "/stop", "/help"]) assert.ok(chunkText(help.updates).includes(name));
    assert.equal(fx.mock.requests.length, before);
    const commands = fx.agent.updates(sessionId).find((u) => u.sessionUpdate === "available_commands_update");
    assert.ok(commands?.sessionUpdate === "available_commands_update");
    assert.deepEqual(commands.availableCommands.map((c) => c.name).sort(), [
      "clear",
      "compact",
      "help",
      "rewind",
      "stop",
    ]);
  });

  test("/compact and /clear refuse while a turn runs, and the turn is not disturbed", async () => {
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    fx.mock.script(reply().text("Thinking").hang());
    const seen = fx.mock.requests.length;
    const running = fx.agent.prompt(sessionId, "Long task");
    await fx.mock.waitForRequests(seen + 1);
    for (const command of ["/compact", "/clear"]) {
      const answer = await fx.agent.prompt(sessionId, command);
      assert.match(chunkText(answer.updates), /A prompt is running in this session/);
    }
    await fx.agent.cancel(sessionId);
    assert.equal((await running).stopReason, "cancelled");
    assert.equal(fx.mock.requests.length, seen + 1, "no summary request was made");
    assert.equal((await store.listArchives(sessionId)).length, 0);
  });

  test("/clear starts a fresh context; the stored history is kept as an archive", async () => {
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    await twoTurns(sessionId, fx.ws.path("c.txt"));
    const cleared = await fx.agent.prompt(sessionId, "/clear");
    assert.match(chunkText(cleared.updates), /Cleared the context\. The previous conversation is archived as \S+/);
    fx.mock.script(
      textReply("Fresh start.").expect((req) => {
        assert.deepEqual(shape(req.body.messages), ["system", "user: What do you know?"]);
      }),
    );
    await fx.agent.prompt(sessionId, "What do you know?");
    fx.mock.assertDone();
    const stored = (await store.loadMessages(sessionId)).map((m) => m.message);
    assert.deepEqual(stored.map(plain), ["user: What do you know?", "assistant: Fresh start."]);
    const archives = await store.listArchives(sessionId);
    assert.equal(archives.length, 1);
    assert.equal((await store.loadMessages(archives[0]?.id ?? "")).length, 6);
  });

  test("_crow/compact is advertised and compacts, with compaction_update for clients that support it", async () => {
    const client = await fx.spawn({ session: { compaction: {} } });
    try {
      const meta = client.initialize.agentCapabilities?._meta as { crow?: { methods?: string[] } } | undefined;
      assert.ok(meta?.crow?.methods?.includes("_crow/compact"));
      const { sessionId } = await client.newSession(fx.ws.dir);
      fx.mock.script(
        reply().toolCall("write", { file_path: fx.ws.path("d.txt"), content: "x\n" }),
        textReply("Done."),
        textReply("Yes."),
      );
      await client.prompt(sessionId, "Write d.txt");
      await client.prompt(sessionId, "Is it there?");
      fx.mock.script(textReply("SUMMARY-D"));
      const result = await client.agent.request<CompactResponse>("_crow/compact", { sessionId });
      assert.equal(result.compacted, true);
      assert.equal(result.summary, "SUMMARY-D");
      assert.equal(result.messagesBefore, 6);
      assert.equal(result.messagesAfter, 4);
      assert.ok(result.archiveId);
      const stored = (await store.loadMessages(sessionId)).map((m) => m.message);
      assert.deepEqual(stored[1], { role: "assistant", content: "SUMMARY-D" });
      assert.equal((await store.listArchives(sessionId))[0]?.id, result.archiveId);

      const updates = await client.waitForUpdate(
        sessionId,
        (u) => u.sessionUpdate === "compaction_update" && u.status === "completed",
        true,
      );
      assert.ok(updates.sessionUpdate === "compaction_update");
      assert.deepEqual(updates.summary, [{ type: "text", text: "SUMMARY-D" }]);
      const statuses = client
        .updates(sessionId)
        .flatMap((u) => (u.sessionUpdate === "compaction_update" ? [u.status] : []));
      assert.deepEqual(statuses, ["in_progress", "completed"]);

      await assert.rejects(client.agent.request("_crow/compact", { sessionId: "no-such-session" }), /not found/i);
      await assert.rejects(client.agent.request("_crow/compact", {}), /sessionId/);
      fx.mock.assertDone();
    } finally {
      await client.close();
    }
  });

  test("context length exceeded: compact, then retry the turn once; a notice tells clients that support notices", async () => {
    const client = await fx.spawn({ session: { notices: {} } });
    try {
      const { sessionId } = await client.newSession(fx.ws.dir);
      await (async () => {
        fx.mock.script(textReply("First answer."), textReply("Second answer."));
        await client.prompt(sessionId, "First question");
        await client.prompt(sessionId, "Second question");
      })();
      fx.mock.script(
        httpError(400, {
          message:
            "This model's maximum context length is 8192 tokens. However, your messages resulted in 9100 tokens.",
          code: "context_length_exceeded",
        }),
        textReply("SUMMARY-E").expect((req) => assertSummarizerRequest(req, [/First answer\./])),
        textReply("Third answer.").expect((req) => {
          assert.deepEqual(shape(req.body.messages), [
            "system",
            "user: First question",
            "assistant: SUMMARY-E",
            "user: Third question",
          ]);
        }),
      );
      const turn = await client.prompt(sessionId, "Third question");
      assert.equal(turn.stopReason, "end_turn");
      assert.equal(chunkText(turn.updates), "Third answer.");
      const notice = turn.updates.find((u) => u.sessionUpdate === "notice");
      assert.ok(notice?.sessionUpdate === "notice");
      assert.equal(notice.title, "Conversation compacted");
      assert.match(notice.description ?? "", /context was too long/);
      fx.mock.assertDone();
      const stored = (await store.loadMessages(sessionId)).map((m) => m.message);
      assert.deepEqual(stored.map(plain), [
        "user: First question",
        "assistant: SUMMARY-E",
        "user: Third question",
        "assistant: Third answer.",
      ]);
    } finally {
      await client.close();
    }
  });

  test("a context length error that compaction cannot help is reported once, as the provider's error", async () => {
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    fx.mock.script(httpError(400, { message: "maximum context length exceeded", code: "context_length_exceeded" }));
    await assert.rejects(fx.agent.prompt(sessionId, "Only question"), /maximum context length exceeded/);
    fx.mock.assertDone();
  });
});
