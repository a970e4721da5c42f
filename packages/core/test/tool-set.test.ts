// A session's own ToolSet through the runtime: each call's name is resolved once (tolerantly), and what it resolved
// to reaches the permission question (its proposal) and the call's execution; the tool's display rides the events.
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import {
  type CrowEvent,
  createLlmClient,
  createRuntime,
  type PermissionRequest,
  type ResolvedTool,
  type ToolDefinition,
  type ToolSet,
} from "@crow/core";
import { type MockLlm, reply, startMockLlm, textReply } from "@crow/testkit";

const quiet = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

/** One `save` tool whose resolutions and dry runs are counted; it proposes and reports a diff of its own making. */
function countingSet(): ToolSet & { resolved: string[]; ran: string[]; proposed: string[] } {
  const definition: ToolDefinition = {
    type: "function",
    function: { name: "save", description: "Saves a note.", parameters: { type: "object" } },
  };
  const resolved: string[] = [];
  const ran: string[] = [];
  const proposed: string[] = [];
  const diff = (args: Record<string, unknown>) => ({ path: "/notes.txt", oldText: null, newText: String(args.text) });
  const tool: ResolvedTool = {
    definition,
    kind: "edit",
    display: (args) => ({ title: `save ${String(args.text)}`, locations: [{ path: "/notes.txt" }] }),
    propose: async (args) => {
      proposed.push(String(args.text));
      return { diff: diff(args) };
    },
    run: async (call) => {
      ran.push(call.tool);
      return { content: "saved", display: { diff: diff(call.args), via: "mine" } };
    },
  };
  return {
    resolved,
    ran,
    proposed,
    definitions: () => [definition],
    resolve(name) {
      resolved.push(name);
      return name === "save" || name === "notes_save" ? tool : undefined;
    },
  };
}

describe("a session's own tool set", () => {
  let mock: MockLlm;
  let dir: string;
  before(async () => {
    mock = await startMockLlm();
    dir = await mkdtemp(path.join(tmpdir(), "crow-tool-set-"));
  });
  after(async () => {
    await mock.close();
    await rm(dir, { recursive: true, force: true });
  });

  test("each call is resolved once; the question gets the tool's proposal, the events its display", async () => {
    const tools = countingSet();
    const asked: PermissionRequest[] = [];
    const crow = await createRuntime({
      llm: createLlmClient({ baseURL: mock.url, retry: { maxRetries: 0 } }),
      model: "mock-model",
      store: false,
      home: dir,
      systemPrompt: "You are a test agent.",
      logger: quiet,
      mode: "ask",
      tools: () => tools,
      askPermission: async (request) => {
        asked.push(request);
        return "allow_once";
      },
    });
    try {
      const session = await crow.newSession({ cwd: dir });
      mock.script(reply().toolCall("notes_save", { text: "hi" }), textReply("Saved."));
      const events: CrowEvent[] = [];
      for await (const event of session.prompt("save hi")) events.push(event);

      // The session's table matched the model's spelling over every tool it offers, then asked the set once.
      assert.deepEqual(tools.resolved, ["save"], "one resolution for the one call");
      assert.deepEqual(tools.ran, ["save"], "it ran under its canonical name");
      assert.equal(asked.length, 1);
      // The gate ran the dry run once and the question carries it: the host has nothing to compute again.
      assert.deepEqual(asked[0]?.proposal, { diff: { path: "/notes.txt", oldText: null, newText: "hi" } });
      assert.deepEqual(tools.proposed, ["hi"], "one dry run for the one asked call");
      const pending = events.find((e) => e.type === "tool_call_pending");
      assert.deepEqual(pending?.type === "tool_call_pending" && pending.call.display, {
        title: "save hi",
        locations: [{ path: "/notes.txt" }],
      });
      const done = events.find((e) => e.type === "tool_call_done");
      assert.deepEqual(done?.type === "tool_call_done" && done.result.display, {
        diff: { path: "/notes.txt", oldText: null, newText: "hi" },
        via: "mine",
      });
    } finally {
      await crow.close();
    }
  });
});
