import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import {
  createLlmClient,
  createRuntime,
  type RuntimeOptions,
  type UserAnswer,
  type UserAsker,
  type UserQuestion,
} from "@crow/core";
import { type MockLlm, reply, startMockLlm, textReply } from "@crow/testkit";

const quiet = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

/** An asker that records the questions and answers each with `answer`. */
function recordingAsker(
  answer: (question: UserQuestion) => Promise<UserAnswer>,
  modes: UserAsker["modes"] = ["form"],
): UserAsker & { questions: UserQuestion[] } {
  const questions: UserQuestion[] = [];
  return {
    modes,
    questions,
    ask: (question) => {
      questions.push(question);
      return answer(question);
    },
  };
}

describe("ask_user and questions to the user, in the SDK (no ACP)", () => {
  let mock: MockLlm;
  let dir: string;
  let options: RuntimeOptions;

  before(async () => {
    mock = await startMockLlm();
    dir = await mkdtemp(path.join(tmpdir(), "crow-ask-user-"));
    options = {
      llm: createLlmClient({ baseURL: mock.url, retry: { maxRetries: 0 } }),
      model: "mock-model",
      store: false,
      home: dir,
      systemPrompt: "You are a test agent.",
      logger: quiet,
    };
  });
  after(async () => {
    await mock.close();
    await rm(dir, { recursive: true, force: true });
  });

  test("a host that can show forms: ask_user is offered, asks a multi-select, and the picks are the result", async () => {
    const asker = recordingAsker(async () => ({ action: "accept", content: { answer: ["lint", "test"] } }));
    const crow = await createRuntime({ ...options, askUser: asker });
    try {
      const session = await crow.newSession({ cwd: dir });
      mock.script(
        reply()
          .toolCall(
            "ask_user",
            { question: "Which checks?", choices: ["lint", "test", "lint"], multiSelect: true },
            { id: "call_q" },
          )
          .expect((request) => {
            assert.ok(request.body.tools?.some((t) => t.function.name === "ask_user"));
          }),
        textReply("Running lint and test.").expect((request) => {
          assert.equal(request.body.messages.at(-1)?.content, "The user picked: lint, test");
        }),
      );
      const result = await session.prompt("check the code").result;
      assert.equal(result.stopReason, "end_turn");
      mock.assertDone();
      const question = asker.questions[0];
      assert.ok(question?.mode === "form");
      assert.equal(question.message, "Which checks?");
      assert.equal(question.callId, "call_q");
      // Choices offered twice are offered once.
      assert.deepEqual(question.form.properties.answer, {
        type: "array",
        title: "Choices",
        items: { type: "string", enum: ["lint", "test"] },
      });
    } finally {
      await crow.close();
    }
  });

  test("no host that can show forms: ask_user is not offered, and a question is declined with the reason", async () => {
    for (const askUser of [undefined, recordingAsker(async () => ({ action: "accept" }), ["url"])]) {
      const crow = await createRuntime({ ...options, ...(askUser ? { askUser } : {}) });
      try {
        const session = await crow.newSession({ cwd: dir });
        assert.equal(session.canAskUser(), false);
        mock.script(
          textReply("Hi.").expect((request) => {
            assert.ok(!request.body.tools?.some((t) => t.function.name === "ask_user"), "ask_user is not offered");
          }),
        );
        await session.prompt("hello").result;
        mock.assertDone();
        const answer = await session.askUser({
          mode: "form",
          message: "Name?",
          form: { type: "object", properties: { name: { type: "string" } } },
          signal: new AbortController().signal,
        });
        assert.deepEqual(answer, {
          action: "decline",
          reason: "no one to ask: the client cannot show the user a question",
        });
      } finally {
        await crow.close();
      }
    }
  });

  test("cancelling the turn withdraws the open question", async () => {
    let asked: () => void = () => {};
    const open = new Promise<void>((resolve) => {
      asked = resolve;
    });
    const asker = recordingAsker(
      (question) =>
        new Promise((resolve) => {
          asked();
          question.signal.addEventListener("abort", () => resolve({ action: "cancel" }), { once: true });
        }),
    );
    const crow = await createRuntime({ ...options, askUser: asker });
    try {
      const session = await crow.newSession({ cwd: dir });
      mock.script(reply().toolCall("ask_user", { question: "Go on?" }));
      const run = session.prompt("do it");
      await open;
      session.cancel();
      assert.equal((await run.result).stopReason, "cancelled");
      assert.equal(asker.questions[0]?.signal.aborted, true);
      mock.assertDone();
    } finally {
      await crow.close();
    }
  });
});
