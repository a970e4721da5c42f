import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import {
  type CrowEvent,
  createLlmClient,
  createRuntime,
  type ExtensionAPI,
  MethodError,
  openStore,
  type RuntimeOptions,
  type Store,
} from "@crow/core";
import { type MockLlm, reply, startMockLlm, textReply } from "@crow/testkit";
import { z } from "zod";

const quiet = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

describe("the SDK without ACP (createRuntime against the mock LLM)", () => {
  let mock: MockLlm;
  let dir: string;
  let options: RuntimeOptions;

  before(async () => {
    mock = await startMockLlm();
    dir = await mkdtemp(path.join(tmpdir(), "crow-sdk-"));
    options = {
      llm: createLlmClient({ baseURL: mock.url, retry: { maxRetries: 0 } }),
      model: "mock-model",
      store: path.join(dir, "crow.db"),
      home: dir,
      systemPrompt: "You are a test agent.",
      logger: quiet,
    };
  });
  after(async () => {
    await mock.close();
    await rm(dir, { recursive: true, force: true });
  });

  test("prompt() is an async iterable of typed events with a final result", async () => {
    const crow = await createRuntime(options);
    try {
      const session = await crow.newSession({ cwd: dir });
      mock.script(reply().text("Hello ").text("there."));
      const run = session.prompt("Say hello");
      const kinds: string[] = [];
      let streamed = "";
      for await (const event of run) {
        kinds.push(event.type);
        if (event.type === "text_delta") streamed += event.text;
      }
      const result = await run.result;
      assert.equal(result.stopReason, "end_turn");
      assert.equal(result.text, "Hello there.");
      assert.equal(streamed, "Hello there.");
      assert.deepEqual(
        result.messages.map((m) => m.role),
        ["user", "assistant"],
      );
      assert.equal(kinds.at(-1), "stop");
      assert.ok(kinds.includes("title"), "the first message titles the session");
      assert.equal(session.title, "Say hello");
      assert.equal(mock.requests.at(-1)?.body.messages[0]?.content, "You are a test agent.");
      mock.assertDone();
    } finally {
      await crow.close();
    }
  });

  test("a stored session loads with its history in a new runtime and continues", async () => {
    const first = await createRuntime(options);
    const session = await first.newSession({ cwd: dir });
    mock.script(textReply("The answer is 42."));
    assert.equal((await session.prompt("What is the answer?").result).text, "The answer is 42.");
    await first.close();

    const second = await createRuntime(options);
    try {
      const listed = await second.listSessions({ cwd: dir });
      assert.ok(listed.sessions.some((s) => s.id === session.id && s.title === "What is the answer?"));
      const loaded = await second.loadSession(session.id);
      assert.deepEqual(
        loaded.history.map((m) => m.role),
        ["user", "assistant"],
      );
      mock.script(textReply("Still 42."));
      const result = await loaded.prompt("And now?").result;
      assert.equal(result.text, "Still 42.");
      const sent = mock.requests.at(-1)?.body.messages ?? [];
      assert.deepEqual(
        sent.map((m) => m.role),
        ["system", "user", "assistant", "user"],
      );
      await assert.rejects(second.loadSession("no-such-session"), /not found/);
    } finally {
      await second.close();
    }
  });

  test("a tool's declared kind decides the permission gate and the event kind, not its name", async () => {
    const ran: string[] = [];
    const extension = (crow: ExtensionAPI) => {
      // Named like a mutating tool, declared a reader; and named like a reader, declared an editor.
      crow.registerTool({
        name: "update_report",
        description: "Reads the report (despite its name).",
        kind: "read",
        parameters: z.object({}),
        execute: () => {
          ran.push("update_report");
          return "report";
        },
      });
      crow.registerTool({
        name: "view_and_fix",
        description: "Fixes things.",
        kind: "edit",
        parameters: z.object({}),
        execute: () => {
          ran.push("view_and_fix");
          return "fixed";
        },
      });
    };
    const crow = await createRuntime({ ...options, mode: "read-only", extensions: [extension] });
    try {
      const session = await crow.newSession({ cwd: dir });
      mock.script(reply().toolCall("update_report", {}).toolCall("view_and_fix", {}), textReply("done"));
      const kinds = new Map<string, string>();
      const run = session.prompt("go");
      for await (const event of run)
        if (event.type === "tool_call_pending") kinds.set(event.call.name, event.call.kind);
      const result = await run.result;
      assert.deepEqual(ran, ["update_report"]);
      assert.deepEqual(Object.fromEntries(kinds), { update_report: "read", view_and_fix: "edit" });
      const tools = result.messages.filter((m) => m.role === "tool").map((m) => String(m.content));
      assert.equal(tools[0], "report");
      assert.match(tools[1] ?? "", /read-only mode/);
    } finally {
      await crow.close();
    }
  });

  test("an extension's tool may supply its own display; without one it gets the generic display", async () => {
    const extension = (crow: ExtensionAPI) => {
      crow.registerTool({
        name: "open_ticket",
        description: "Opens a ticket.",
        parameters: z.object({ id: z.number() }),
        display: (args) => ({ title: `Ticket #${String(args.id)}`, locations: [{ path: "/tickets.md", line: 3 }] }),
        execute: () => "opened",
      });
      crow.registerTool({
        name: "close_ticket",
        description: "Closes a ticket.",
        parameters: z.object({ id: z.number() }),
        execute: () => "closed",
      });
    };
    const crow = await createRuntime({ ...options, extensions: [extension] });
    try {
      const session = await crow.newSession({ cwd: dir });
      mock.script(reply().toolCall("open_ticket", { id: 7 }).toolCall("close_ticket", { id: 7 }), textReply("done"));
      const displays = new Map<string, unknown>();
      const run = session.prompt("go");
      for await (const event of run)
        if (event.type === "tool_call_pending") displays.set(event.call.name, event.call.display);
      await run.result;
      assert.deepEqual(Object.fromEntries(displays), {
        open_ticket: { title: "Ticket #7", locations: [{ path: "/tickets.md", line: 3 }] },
        close_ticket: { title: "close_ticket" },
      });
    } finally {
      await crow.close();
    }
  });

  test("an extension's in-process tool (zod schema) and before_request hook", async () => {
    const seen: unknown[] = [];
    const extension = (crow: ExtensionAPI) => {
      crow.registerTool({
        name: "add",
        description: "Adds two numbers.",
        parameters: z.object({ a: z.number(), b: z.number() }),
        execute: ({ a, b }, ctx) => {
          seen.push(ctx.session.id);
          return String(a + b);
        },
      });
      crow.on("before_request", (draft) => ({
        ...draft,
        messages: draft.messages.map((m) => (m.role === "system" ? { ...m, content: `${m.content} Be brief.` } : m)),
      }));
    };
    const crow = await createRuntime({ ...options, extensions: [extension] });
    try {
      const session = await crow.newSession({ cwd: dir });
      mock.script(
        reply().toolCall("add", { a: 2, b: 3 }),
        reply().toolCall("add", { a: "two" }),
        textReply("2 + 3 = 5"),
      );
      const result = await session.prompt("Add 2 and 3").result;
      assert.equal(result.text, "2 + 3 = 5");
      const request = mock.requests.at(-3);
      const tool = request?.body.tools?.find((t) => t.function.name === "add");
      assert.deepEqual((tool?.function.parameters as { required?: string[] } | undefined)?.required, ["a", "b"]);
      assert.equal(request?.body.messages[0]?.content, "You are a test agent. Be brief.");
      const tools = result.messages.filter((m) => m.role === "tool").map((m) => String(m.content));
      assert.equal(tools[0], "5");
      assert.match(tools[1] ?? "", /invalid arguments for add/);
      assert.deepEqual(seen, [session.id]);
      // The rewrite applied to the request only: the stored system prompt is unchanged.
      assert.equal(session.systemPrompt, "You are a test agent.");
    } finally {
      await crow.close();
    }
  });

  test("a fork right after a mode change copies that mode, however slow the store is to write it", async () => {
    const real = await openStore(`sqlite:///${path.join(dir, "slow.db")}`);
    // The same store, with session changes that land later than the fork asks (a PostgreSQL pool opening a
    // connection for the write, under load).
    const slow = new Proxy(real, {
      get(target, key, receiver) {
        if (key !== "updateSession") return Reflect.get(target, key, receiver);
        return async (...args: Parameters<Store["updateSession"]>) => {
          await new Promise((resolve) => setTimeout(resolve, 150));
          return target.updateSession(...args);
        };
      },
    });
    const crow = await createRuntime({ ...options, store: slow });
    try {
      const session = await crow.newSession({ cwd: dir });
      session.setMode("ask");
      const fork = await crow.forkSession(session.id);
      assert.equal(fork.mode, "ask");
    } finally {
      await crow.close();
      await real.close();
    }
  });

  test("compact(), the built-in commands and _crow/compact", async () => {
    const crow = await createRuntime(options);
    try {
      const session = await crow.newSession({ cwd: dir });
      mock.script(textReply("one"), textReply("two"), textReply("three"));
      for (const text of ["first", "second", "third"]) await session.prompt(text).result;
      const events: CrowEvent[] = [];
      session.subscribe((e) => events.push(e));
      mock.script(textReply("SUMMARY of the middle"));
      const result = await session.compact();
      assert.equal(result.compacted, true);
      assert.ok(events.some((e) => e.type === "compaction_done" && e.summary === "SUMMARY of the middle"));
      assert.equal(session.history.length, 4);
      assert.match(await session.command("help"), /\/compact[\s\S]*\/clear[\s\S]*\/stop[\s\S]*\/help/);
      assert.equal(await session.command("stop"), "Nothing is running.");
      assert.match(await session.command("nope"), /Unknown command: \/nope/);
      assert.ok(crow.methods().includes("_crow/compact"));
      mock.script(textReply("SUMMARY again"));
      const answer = (await crow.callMethod("_crow/compact", { sessionId: session.id })) as { summary?: string };
      assert.equal(answer.summary, "SUMMARY again");
      await assert.rejects(crow.callMethod("_crow/compact", {}), (e: unknown) => e instanceof MethodError);
      assert.match(await session.command("clear"), /archived as/);
      assert.equal(session.history.length, 0);
    } finally {
      await crow.close();
    }
  });

  test("a throwing extension is reported, at load and in a hook, and the turn completes", async () => {
    const crow = await createRuntime({
      ...options,
      extensions: [
        {
          name: "broken-at-load",
          extension: () => {
            throw new Error("boom at load");
          },
        },
        {
          name: "broken-hook",
          extension: (api) => {
            api.on("before_request", () => {
              throw new Error("boom in hook");
            });
          },
        },
      ],
    });
    try {
      assert.match(crow.extensionErrors.join("\n"), /broken-at-load.*boom at load/);
      const session = await crow.newSession({ cwd: dir });
      assert.match(session.problems().join("\n"), /boom at load/);
      mock.script(textReply("fine"));
      const events: CrowEvent[] = [];
      const result = await session.prompt("hi", { onEvent: (e) => events.push(e) }).result;
      assert.equal(result.stopReason, "end_turn");
      assert.equal(result.text, "fine");
      const notice = events.find((e) => e.type === "notice");
      assert.ok(notice && notice.type === "notice" && /broken-hook.*boom in hook/.test(notice.message));
    } finally {
      await crow.close();
    }
  });

  test("an extension provider serves the models that name it", async () => {
    const crow = await createRuntime({
      ...options,
      llm: undefined,
      model: "local",
      models: [{ name: "local", id: "echo-1", provider: "echo" }],
      extensions: [
        (api) =>
          api.registerProvider("echo", () => ({
            stream: async (request) => ({
              ok: true,
              message: { role: "assistant", content: `${request.model} heard ${request.messages.length} messages` },
              toolCalls: [],
              finishReason: "stop",
              attempts: 1,
            }),
          })),
      ],
    });
    try {
      assert.deepEqual(crow.providers(), ["echo"]);
      const session = await crow.newSession({ cwd: dir });
      assert.equal((await session.prompt("hi").result).text, "echo-1 heard 2 messages");
    } finally {
      await crow.close();
    }
  });
});
