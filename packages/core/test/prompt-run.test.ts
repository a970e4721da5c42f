import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import {
  type Crow,
  type CrowEvent,
  type CrowSession,
  createLlmClient,
  createRuntime,
  type ExtensionAPI,
  type PromptRun,
  RunIterationError,
} from "@crow/core";
import { type MockLlm, reply, startMockLlm, textReply } from "@crow/testkit";
import { z } from "zod";

const quiet = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

/** An in-process tool, so a turn has two requests and a tool call between them: many events. */
const noteTool = (crow: ExtensionAPI) => {
  crow.registerTool({
    name: "note",
    description: "Takes a note.",
    kind: "read",
    parameters: z.object({ text: z.string() }),
    execute: ({ text }) => `noted ${text}`,
  });
};

/** Scripts one turn: a tool call, then a streamed answer. */
function scriptTurn(mock: MockLlm): void {
  mock.script(reply().text("Let me note it.").toolCall("note", { text: "x" }), reply().text("All noted.", 3));
}

async function collect(run: AsyncIterable<CrowEvent>): Promise<string[]> {
  const types: string[] = [];
  for await (const event of run) types.push(event.type);
  return types;
}

describe("a prompt's run keeps its turn's events for an iterator that starts late", () => {
  let mock: MockLlm;
  let dir: string;
  let crow: Crow;

  before(async () => {
    mock = await startMockLlm();
    dir = await mkdtemp(path.join(tmpdir(), "crow-run-"));
    crow = await createRuntime({
      llm: createLlmClient({ baseURL: mock.url, retry: { maxRetries: 0 } }),
      model: "mock-model",
      store: false,
      home: dir,
      systemPrompt: "You are a test agent.",
      logger: quiet,
      extensions: [noteTool],
    });
  });
  after(async () => {
    await crow.close();
    await mock.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** A new session and the types of every event its stream carries from now on. */
  async function watched(): Promise<{ session: CrowSession; seen: string[] }> {
    const session = await crow.newSession({ cwd: dir });
    const seen: string[] = [];
    session.subscribe((event) => seen.push(event.type));
    return { session, seen };
  }

  /** Resolves once the session's stream carried an event of this type. */
  function reached(session: CrowSession, type: CrowEvent["type"]): Promise<void> {
    return new Promise((resolve) => {
      const unsubscribe = session.subscribe((event) => {
        if (event.type !== type) return;
        unsubscribe();
        resolve();
      });
    });
  }

  test("an iteration started after an await that let the turn stream yields every event, as an immediate one", async () => {
    const early = await watched();
    scriptTurn(mock);
    const immediate = await collect(early.session.prompt("take a note"));

    const late = await watched();
    scriptTurn(mock);
    const run = late.session.prompt("take a note");
    await reached(late.session, "tool_call_done");
    const streamedBefore = late.seen.length;
    assert.ok(late.seen.includes("text_delta"), `the turn streamed before the iteration: ${late.seen.join(" ")}`);
    const yielded = await collect(run);

    assert.deepEqual(yielded, immediate);
    assert.deepEqual(yielded, late.seen, "every event the session's stream carried during the turn, in order");
    assert.equal(yielded[0], "request_start");
    assert.equal(yielded.at(-1), "stop");
    assert.ok(yielded.length > streamedBefore, "then the live ones");
    assert.equal((await run.result).text, "All noted.");
    mock.assertDone();
  });

  test("an iteration started after `result` resolved yields every event of the turn", async () => {
    const { session, seen } = await watched();
    scriptTurn(mock);
    const run = session.prompt("take a note");
    assert.equal((await run.result).stopReason, "end_turn");
    const yielded = await collect(run);
    assert.deepEqual(yielded, seen);
    assert.ok(yielded.includes("tool_call_done") && yielded.at(-1) === "stop", yielded.join(" "));
    mock.assertDone();
  });

  test("a run hands its events to one iterator: a second iteration, during or after the first, throws", async () => {
    const { session } = await watched();
    scriptTurn(mock);
    const run = session.prompt("take a note");
    const first = collect(run);
    assert.throws(() => run[Symbol.asyncIterator](), RunIterationError);
    assert.ok((await first).includes("tool_call_done"));
    await assert.rejects(collect(run), /already iterated.*session\.subscribe\(\)/);
    mock.assertDone();
  });

  test("a run prompted with events: false keeps nothing: iterating it throws, onEvent and result still work", async () => {
    const { session, seen } = await watched();
    scriptTurn(mock);
    const relayed: string[] = [];
    const run: PromptRun = session.prompt("take a note", { events: false, onEvent: (e) => relayed.push(e.type) });
    assert.throws(() => run[Symbol.asyncIterator](), /events: false.*keeps no events/);
    assert.equal((await run.result).text, "All noted.");
    await assert.rejects(collect(run), RunIterationError);
    assert.deepEqual(relayed, seen);
    mock.assertDone();
  });

  test("a finished run's cancel, or breaking out of its late iteration, leaves the session's next turn alone", async () => {
    const { session } = await watched();
    mock.script(textReply("first"), reply().text("second", 2));
    const finished = session.prompt("one");
    await finished.result;
    const next = session.prompt("two");
    finished.cancel();
    for await (const _ of finished) break;
    const result = await next.result;
    assert.equal(result.stopReason, "end_turn");
    assert.equal(result.text, "second");
    mock.assertDone();
  });
});
