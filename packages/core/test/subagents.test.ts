/**
 * Subagents through the SDK against the mock LLM: the `task` tool end to end (the child runs its own turn with its own
 * tool call, the parent gets the child's answer as the tool result, the child is stored with its parent link and its
 * activity streams into the parent's tool call), nesting up to the depth limit, cancellation of the parent mid-child
 * (both histories stay valid for the next prompt), and `_crow/subagent`'s answers and parameter errors.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import {
  type Crow,
  type CrowEvent,
  createLlmClient,
  createRuntime,
  MAX_SUBAGENT_DEPTH,
  MethodError,
  type RuntimeOptions,
  SUBAGENT_METHOD,
  type SubagentResponse,
} from "@crow/core";
import { type MockLlm, reply, startMockLlm, textReply } from "@crow/testkit";

const quiet = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

/** Resolves once the session is closed (a closed child's writes are all stored). */
async function closed(crow: Crow, id: string): Promise<void> {
  // Bounded so a child that is never cancelled fails the test instead of hanging it.
  for (let i = 0; crow.session(id); i++) {
    if (i > 2000) throw new Error(`session ${id} is still open`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** The text a parent's tool call received as progress (what the client shows while the child works). */
function progressText(events: CrowEvent[], callId: string): string {
  return events
    .map((e) => (e.type === "tool_call_progress" && e.id === callId ? (e.progress.message ?? "") : ""))
    .join("");
}

describe("subagents through the SDK", () => {
  let mock: MockLlm;
  let dir: string;
  let options: RuntimeOptions;
  /** Resolves when the `slow` tool starts; the tool itself waits for its signal. */
  let slowStarted: () => void = () => {};

  before(async () => {
    mock = await startMockLlm();
    dir = await mkdtemp(path.join(tmpdir(), "crow-subagents-"));
    options = {
      llm: createLlmClient({ baseURL: mock.url, retry: { maxRetries: 0 } }),
      model: "mock-model",
      models: [{ name: "mock-model" }],
      store: path.join(dir, "crow.db"),
      home: dir,
      systemPrompt: "You are a test agent.",
      logger: quiet,
      extensions: [
        (api) => {
          api.registerTool({
            name: "lookup",
            description: "Looks up a word.",
            parameters: api.z.object({ key: api.z.string() }),
            readOnly: true,
            execute: ({ key }) => (key === "secret" ? "swordfish" : "unknown"),
          });
          api.registerTool({
            name: "stamp",
            description: "Writes a stamp (mutating).",
            parameters: api.z.object({}),
            execute: () => "stamped",
          });
          api.registerTool({
            name: "slow",
            description: "Waits until cancelled.",
            parameters: api.z.object({}),
            readOnly: true,
            execute: (_args, { signal }) =>
              new Promise<string>((resolve) => {
                slowStarted();
                signal.addEventListener("abort", () => resolve("stopped"), { once: true });
              }),
          });
        },
      ],
    };
  });
  after(async () => {
    await mock.close();
    await rm(dir, { recursive: true, force: true });
  });

  test("task: the child runs its own turn and tool call; its answer is the tool result; it is stored as a child", async () => {
    const crow = await createRuntime(options);
    try {
      const parent = await crow.newSession({ cwd: dir });
      mock.script(
        reply()
          .text("Delegating.")
          .toolCall(
            "task",
            { description: "Find the secret", prompt: "Look up the secret word and report it." },
            { id: "call_task" },
          )
          .expect((req) => {
            const task = req.body.tools?.find((t) => t.function.name === "task");
            assert.ok(task, "the task tool is offered");
            assert.match(task.function.description ?? "", /none of this conversation/);
            assert.deepEqual((task.function.parameters as { required?: string[] }).required, ["description", "prompt"]);
          }),
        reply()
          .text("Looking it up.")
          .toolCall("lookup", { key: "secret" }, { id: "call_child" })
          .usage(50, 5)
          .expect((req) => {
            // A fresh context: the system prompt and the delegated prompt, nothing of the parent's conversation.
            const [system, user, ...rest] = req.body.messages;
            assert.equal(system?.content, "You are a test agent.");
            assert.match(String(user?.content), /^Look up the secret word and report it\.\n\n---\nYou are a subagent/);
            assert.equal(rest.length, 0);
          }),
        textReply("The secret is swordfish.").expect((req) => {
          assert.equal(req.body.messages.at(-1)?.content, "swordfish");
        }),
        textReply("Done: swordfish.").expect((req) => {
          const last = req.body.messages.at(-1);
          assert.equal(last?.role, "tool");
          assert.equal(last?.tool_call_id, "call_task");
          assert.match(String(last?.content), /^The secret is swordfish\.\n\n\(subagent session [\w-]+\)$/);
        }),
      );
      const events: CrowEvent[] = [];
      const result = await parent.prompt("What is the secret?", { onEvent: (e) => events.push(e) }).result;
      assert.equal(result.stopReason, "end_turn");
      assert.equal(result.text, "Done: swordfish.");
      mock.assertDone();

      const { sessions: children } = await crow.listSessions({ parentId: parent.id });
      assert.equal(children.length, 1);
      const child = children[0];
      assert.ok(child);
      assert.equal(child.parentId, parent.id);
      assert.equal(child.cwd, dir);
      assert.equal(child.model, "mock-model");
      assert.equal(crow.session(child.id), undefined, "the child is closed once it answered");
      const stored = await crow.store?.loadMessages(child.id);
      assert.deepEqual(
        stored?.map((m) => m.message.role),
        ["user", "assistant", "tool", "assistant"],
      );

      // The child's activity streamed into the parent's tool call, in order.
      const shown = progressText(events, "call_task");
      assert.equal(shown, `Subagent ${child.id}: Find the secret\nLooking it up.\n→ lookup\nThe secret is swordfish.`);
      const done = events.find((e) => e.type === "tool_call_done" && e.id === "call_task");
      assert.ok(done?.type === "tool_call_done");
      assert.equal(done.status, "completed");
      assert.deepEqual(done.result.display, { subagent: { sessionId: child.id, stopReason: "end_turn" } });
    } finally {
      await crow.close();
    }
  });

  test(`children nest ${MAX_SUBAGENT_DEPTH} deep; deeper delegation is refused in the tool result`, async () => {
    const crow = await createRuntime(options);
    try {
      const top = await crow.newSession({ cwd: dir });
      const task = (id: string) => reply().toolCall("task", { description: "go deeper", prompt: "Go deeper." }, { id });
      mock.script(
        task("call_top"),
        task("call_child"),
        task("call_grandchild"),
        textReply("I did it myself.").expect((req) => {
          const last = req.body.messages.at(-1);
          assert.equal(last?.tool_call_id, "call_grandchild");
          assert.match(String(last?.content), /at most 2 levels deep and this session is at depth 2/);
        }),
        textReply("The grandchild did it.").expect((req) => {
          assert.match(String(req.body.messages.at(-1)?.content), /^I did it myself\./);
        }),
        textReply("All done."),
      );
      const result = await top.prompt("Delegate it").result;
      assert.equal(result.text, "All done.");
      mock.assertDone();
      const [child] = (await crow.listSessions({ parentId: top.id })).sessions;
      assert.ok(child);
      const [grandchild] = (await crow.listSessions({ parentId: child.id })).sessions;
      assert.ok(grandchild);
      assert.deepEqual((await crow.listSessions({ parentId: grandchild.id })).sessions, []);
    } finally {
      await crow.close();
    }
  });

  test("cancelling the parent mid-child cancels the child; both histories stay valid", async () => {
    const crow = await createRuntime(options);
    try {
      const parent = await crow.newSession({ cwd: dir });
      const started = new Promise<void>((resolve) => {
        slowStarted = resolve;
      });
      mock.script(
        reply().toolCall("task", { description: "wait", prompt: "Run the slow tool." }, { id: "call_wait" }),
        reply().text("Waiting on it.").toolCall("slow", {}, { id: "call_slow" }),
      );
      const events: CrowEvent[] = [];
      const run = parent.prompt("Start the slow job", { onEvent: (e) => events.push(e) });
      await started;
      const [child] = (await crow.listSessions({ parentId: parent.id })).sessions;
      assert.ok(child);
      assert.equal(crow.session(child.id)?.running, true, "the child is working");
      parent.cancel();
      const result = await run.result;
      assert.equal(result.stopReason, "cancelled");
      await closed(crow, child.id);
      const done = events.find((e) => e.type === "tool_call_done" && e.id === "call_wait");
      assert.ok(done?.type === "tool_call_done");
      assert.equal(done.status, "cancelled");

      const childMessages = (await crow.store?.loadMessages(child.id))?.map((m) => m.message);
      assert.deepEqual(
        childMessages?.map((m) => m.role),
        ["user", "assistant", "tool"],
      );
      assert.equal(childMessages?.[2]?.role === "tool" && childMessages[2].tool_call_id, "call_slow");

      // The next prompt of each session sends a history the mock's tool-call invariant accepts.
      mock.script(textReply("Parent again."), textReply("Child again."));
      assert.equal((await parent.prompt("go on").result).text, "Parent again.");
      const reloaded = await crow.loadSession(child.id);
      assert.equal(reloaded.parentId, parent.id);
      assert.equal((await reloaded.prompt("go on").result).text, "Child again.");
      mock.assertDone();
    } finally {
      await crow.close();
    }
  });

  test("ask mode: the child's mutating calls are asked about through the parent, on the task's tool call", async () => {
    const asked: Array<{ id: string; name: string; sessionId: string | undefined }> = [];
    const crow = await createRuntime(options);
    try {
      const parent = await crow.newSession({
        cwd: dir,
        mode: "ask",
        askPermission: async (request) => {
          asked.push({ id: request.call.id, name: request.call.name, sessionId: request.sessionId });
          return "reject";
        },
      });
      mock.script(
        reply().toolCall("task", { description: "stamp it", prompt: "Stamp it." }, { id: "call_ask_task" }),
        reply().toolCall("stamp", {}, { id: "call_stamp" }),
        textReply("I was not allowed to stamp.").expect((req) => {
          assert.match(String(req.body.messages.at(-1)?.content), /reject/i);
        }),
        textReply("The subagent could not stamp."),
      );
      assert.equal((await parent.prompt("Stamp via a subagent").result).text, "The subagent could not stamp.");
      mock.assertDone();
      assert.deepEqual(asked, [{ id: "call_ask_task", name: "stamp", sessionId: parent.id }]);
      const [child] = (await crow.listSessions({ parentId: parent.id })).sessions;
      assert.equal(child?.mode, "ask", "the child inherits the parent's mode");
    } finally {
      await crow.close();
    }
  });

  test(`${SUBAGENT_METHOD} runs a stored child of a parent and answers its result`, async () => {
    const crow = await createRuntime(options);
    try {
      const parent = await crow.newSession({ cwd: dir, mode: "read-only" });
      mock.script(textReply("Child answer.").usage(20, 3));
      const answer = (await crow.callMethod(SUBAGENT_METHOD, {
        cwd: dir,
        prompt: "Say something.",
        parentSessionId: parent.id,
      })) as SubagentResponse;
      assert.equal(answer.text, "Child answer.");
      assert.equal(answer.stopReason, "end_turn");
      assert.equal(answer.usage?.totalTokens, 23);
      const record = await crow.store?.getSession(answer.sessionId);
      assert.equal(record?.parentId, parent.id);
      assert.equal(record?.mode, "read-only", "the child inherits the parent's mode");
      assert.equal(mock.requests.at(-1)?.body.messages.at(-1)?.content, "Say something.");
      mock.assertDone();
    } finally {
      await crow.close();
    }
  });

  test(`${SUBAGENT_METHOD} refuses bad params with clear JSON-RPC errors`, async () => {
    const crow = await createRuntime(options);
    try {
      const top = await crow.newSession({ cwd: dir });
      const child = await crow.newSession({ cwd: dir, parentId: top.id });
      const grandchild = await crow.newSession({ cwd: dir, parentId: child.id });
      const cases: Array<[unknown, number, RegExp]> = [
        [null, -32602, /expects \{"cwd"/],
        [{ prompt: "x" }, -32602, /cwd is required/],
        [{ cwd: "relative/dir", prompt: "x" }, -32602, /cwd must be an absolute path: relative\/dir/],
        [{ cwd: path.join(dir, "missing"), prompt: "x" }, -32602, /cwd is not a directory/],
        [{ cwd: dir }, -32602, /prompt must be a non-empty string/],
        [{ cwd: dir, prompt: "x", model: "gpt-nope" }, -32602, /unknown model "gpt-nope"/],
        [{ cwd: dir, prompt: "x", parentSessionId: "no-such-session" }, -32602, /unknown parent session: no-such/],
        [{ cwd: dir, prompt: "x", parentSessionId: grandchild.id }, -32600, /at most 2 levels deep/],
      ];
      for (const [params, code, message] of cases) {
        await assert.rejects(crow.callMethod(SUBAGENT_METHOD, params), (error: unknown) => {
          assert.ok(error instanceof MethodError, `${JSON.stringify(params)}: ${error}`);
          assert.equal(error.code, code, `${JSON.stringify(params)}: ${error.message}`);
          assert.match(error.message, message);
          return true;
        });
      }
      assert.deepEqual((await crow.listSessions({ parentId: grandchild.id })).sessions, [], "nothing was created");
      assert.equal(mock.pending(), 0);
    } finally {
      await crow.close();
    }
  });
});
