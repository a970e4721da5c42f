import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { callDisplay, type ToolCallInfo } from "@crow/core";
import { EventRelay } from "../src/acp/event-relay.js";
import {
  commandsUpdate,
  messageChunk,
  modeUpdate,
  newRelay,
  RESTART_NOTICE,
  relayDelta,
  relayRetry,
  resultContent,
  type StreamRelay,
  toolCallFinished,
  toolCallProgress,
  toolCallRunning,
  toolCallStarted,
  usageUpdate,
} from "../src/acp/translate.js";

/** A call as the loop announces it: its display from the tool it resolved to (here the default one). */
const call = (over: Partial<Omit<ToolCallInfo, "display">> = {}): ToolCallInfo => {
  const base = {
    id: "call_1",
    name: "read",
    kind: "read" as const,
    args: { file_path: "/ws/a.ts", offset: 10 } as Record<string, unknown>,
    rawArguments: '{"file_path":"/ws/a.ts","offset":10}',
    ...over,
  };
  return { ...base, display: callDisplay(base.name, base.args) };
};

describe("translate: loop events → ACP updates", () => {
  test("text and thoughts", () => {
    assert.deepEqual(messageChunk("hi"), {
      sessionUpdate: "agent_message_chunk",
      content: { type: "text", text: "hi" },
    });
  });

  const started: Array<[string, ToolCallInfo, Record<string, unknown>]> = [
    [
      "read with offset → location at that line",
      call(),
      { kind: "read", title: "read: /ws/a.ts", locations: [{ path: "/ws/a.ts", line: 10 }] },
    ],
    [
      "terminal → execute, command in the title, no location",
      call({ name: "terminal", kind: "execute", args: { command: "npm test" } }),
      { kind: "execute", title: "terminal: npm test", locations: undefined },
    ],
    [
      "edit → edit with the file as location",
      call({ name: "edit", kind: "edit", args: { file_path: "/ws/b.ts", old_string: "a", new_string: "b" } }),
      { kind: "edit", title: "edit: /ws/b.ts", locations: [{ path: "/ws/b.ts" }] },
    ],
    [
      "unknown tool → its name as title",
      call({ name: "teleport", kind: "other", args: { to: "mars" } }),
      { kind: "other", title: "teleport", locations: undefined },
    ],
  ];
  for (const [name, input, expected] of started) {
    test(`tool_call: ${name}`, () => {
      const update = toolCallStarted(input, "acp-1");
      assert.ok(update.sessionUpdate === "tool_call");
      assert.equal(update.toolCallId, "acp-1");
      assert.equal(update.status, "pending");
      assert.equal(update.kind, expected.kind);
      assert.equal(update.title, expected.title);
      assert.deepEqual(update.locations, expected.locations);
      assert.deepEqual(update.rawInput, input.args);
    });
  }

  test("tool_call_update: running, then finished with router content first", () => {
    assert.deepEqual(toolCallRunning("t"), {
      sessionUpdate: "tool_call_update",
      toolCallId: "t",
      status: "in_progress",
    });
    const diff = { type: "diff" as const, path: "/ws/b.ts", oldText: "a", newText: "b" };
    const done = toolCallFinished("t", "completed", {
      content: "Edited.",
      display: { diff: { path: "/ws/b.ts", oldText: "a", newText: "b" } },
    });
    assert.ok(done.sessionUpdate === "tool_call_update");
    assert.equal(done.status, "completed");
    assert.deepEqual(done.content, [diff, { type: "content", content: { type: "text", text: "Edited." } }]);
  });

  test("tool_call_update of an edit: the text diff is left out (the diff block shows it), the diagnostics after it stay", () => {
    const diagnostics = {
      language: "typescript",
      added: [
        {
          path: "/ws/c.ts",
          line: 3,
          column: 21,
          severity: "error" as const,
          code: "TS2554",
          message: "Expected 2 arguments, but got 1.",
        },
      ],
      total: 1,
      fixed: 0,
    };
    const text = [
      "Successfully edited /ws/b.ts",
      "",
      "--- /ws/b.ts",
      "+++ /ws/b.ts",
      "@@ -1,2 +1,2 @@",
      "-a",
      "+b",
      " ",
      "\\ No newline at end of file",
      "Diagnostics (typescript) this change introduced: 1 error",
      "c.ts:3:21 error TS2554: Expected 2 arguments, but got 1.",
    ].join("\n");
    const done = toolCallFinished("t", "completed", {
      content: text,
      display: { diff: { path: "/ws/b.ts", oldText: "a", newText: "b" }, diagnostics },
    });
    assert.ok(done.sessionUpdate === "tool_call_update");
    assert.deepEqual(done.content?.[1], {
      type: "content",
      content: {
        type: "text",
        text: "Successfully edited /ws/b.ts\nDiagnostics (typescript) this change introduced: 1 error\nc.ts:3:21 error TS2554: Expected 2 arguments, but got 1.",
      },
    });
    assert.deepEqual(done._meta, { "crow/diagnostics": diagnostics });
  });

  const statuses: Array<[Parameters<typeof toolCallFinished>[1], string]> = [
    ["completed", "completed"],
    ["failed", "failed"],
    ["blocked", "failed"],
    ["cancelled", "failed"],
  ];
  for (const [status, acp] of statuses) {
    test(`loop status ${status} → ${acp}`, () => {
      const update = toolCallFinished("t", status, { content: "x", isError: status !== "completed" });
      assert.ok(update.sessionUpdate === "tool_call_update");
      assert.equal(update.status, acp);
    });
  }

  test("progress relays a live terminal, and nothing for plain text", () => {
    const terminal = { type: "terminal" as const, terminalId: "term-1" };
    assert.deepEqual(toolCallProgress("t", { display: { terminalId: "term-1" } }), {
      sessionUpdate: "tool_call_update",
      toolCallId: "t",
      content: [terminal],
    });
    assert.equal(toolCallProgress("t", { message: "50%" }), undefined);
  });

  test("result content: text and data-URL images, empty text dropped", () => {
    assert.deepEqual(resultContent(""), []);
    assert.deepEqual(
      resultContent([
        { type: "text", text: "see" },
        { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } },
        { type: "text", text: "" },
      ]),
      [
        { type: "content", content: { type: "text", text: "see" } },
        { type: "content", content: { type: "image", mimeType: "image/png", data: "AAAA" } },
      ],
    );
  });

  test("usage, commands, mode", () => {
    assert.deepEqual(usageUpdate({ promptTokens: 100, completionTokens: 20, totalTokens: 120 }, 1000), {
      sessionUpdate: "usage_update",
      used: 120,
      size: 1000,
    });
    assert.deepEqual(commandsUpdate([{ name: "help", description: "Help" }]), {
      sessionUpdate: "available_commands_update",
      availableCommands: [{ name: "help", description: "Help" }],
    });
    assert.deepEqual(modeUpdate("ask"), { sessionUpdate: "current_mode_update", currentModeId: "ask" });
  });
});

describe("translate: streamed text across retries is never sent twice", () => {
  /** Runs a script of deltas and retries, returning what the client got. */
  function run(script: Array<string | "<retry>">): string {
    let relay: StreamRelay = newRelay();
    let out = "";
    for (const step of script) {
      if (step === "<retry>") relay = relayRetry(relay);
      else {
        const result = relayDelta(relay, step);
        relay = result.relay;
        out += result.out;
      }
    }
    return out;
  }
  const cases: Array<[string, Array<string | "<retry>">, string]> = [
    ["no retry", ["Hel", "lo"], "Hello"],
    ["retry before any text", ["<retry>", "Hel", "lo"], "Hello"],
    [
      "same answer again: repeated prefix swallowed",
      ["Hello, ", "wor", "<retry>", "Hello, ", "world!"],
      "Hello, world!",
    ],
    ["shorter repeat then more", ["Hello", "<retry>", "He", "llo", " there"], "Hello there"],
    [
      "a different answer: notice, then only the new part",
      ["Hello", "<retry>", "Help me"],
      `Hello${RESTART_NOTICE}p me`,
    ],
    ["two retries", ["A", "B", "<retry>", "A", "<retry>", "A", "B", "C"], "ABC"],
  ];
  for (const [name, script, expected] of cases) {
    test(name, () => assert.equal(run(script), expected));
  }
});

describe("EventRelay", () => {
  test("gives every tool call a session-unique ACP id, even when the provider reuses ids", () => {
    const used = new Set<string>();
    const first = new EventRelay(
      () => 1000,
      used,
      () => undefined,
    );
    const a = first.translate({ type: "tool_call_pending", call: call({ id: "call_0" }) });
    const second = new EventRelay(
      () => 1000,
      used,
      () => undefined,
    );
    const b = second.translate({ type: "tool_call_pending", call: call({ id: "call_0" }) });
    const ids = [...a, ...b].map((u) => (u.sessionUpdate === "tool_call" ? u.toolCallId : ""));
    assert.deepEqual(ids, ["call_0", "call_0#2"]);
    const done = second.translate({
      type: "tool_call_done",
      id: "call_0",
      status: "completed",
      result: { content: "" },
    });
    assert.ok(done[0]?.sessionUpdate === "tool_call_update");
    assert.equal(done[0].toolCallId, "call_0#2");
  });

  test("a retry event resets both channels for dedupe; a new request starts fresh", () => {
    const relay = new EventRelay(
      () => 1000,
      new Set(),
      () => undefined,
    );
    const texts = (events: Parameters<EventRelay["translate"]>[0][]) =>
      events
        .flatMap((e) => relay.translate(e))
        .map((u) => (u.sessionUpdate === "agent_message_chunk" && u.content.type === "text" ? u.content.text : "?"));
    const error = { kind: "network" as const, message: "reset", retryable: true, attempts: 1 };
    assert.deepEqual(
      texts([
        { type: "request_start", step: 1, messageId: "m1" },
        { type: "text_delta", text: "Hi" },
        { type: "retry", attempt: 1, delayMs: 0, error },
        { type: "text_delta", text: "Hi" },
        { type: "text_delta", text: "!" },
        { type: "request_start", step: 2, messageId: "m2" },
        { type: "text_delta", text: "Hi" },
      ]),
      ["Hi", "!", "Hi"],
    );
  });
});
