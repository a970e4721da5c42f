import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { checkToolInvariant, reply, startMockLlm } from "@crow/testkit";

/** The mock must catch what a real provider would reject, or the agent tests prove nothing. */
describe("the mock LLM itself", () => {
  const post = (url: string, body: unknown) =>
    fetch(`${url}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });

  test("an unscripted request gets a 500 and fails assertDone", async () => {
    const mock = await startMockLlm();
    try {
      const response = await post(mock.url, { model: "m", messages: [{ role: "user", content: "hello?" }] });
      assert.equal(response.status, 500);
      assert.throws(() => mock.assertDone(), /unscripted request.*hello\?/);
    } finally {
      await mock.close();
    }
  });

  test("invariant violations and failed expectations are recorded; unused answers are reported", async () => {
    const mock = await startMockLlm();
    try {
      mock.script(
        reply()
          .text("x")
          .expect(() => assert.fail("wrong model")),
        reply().text("never requested"),
      );
      const messages = [
        { role: "user", content: "hi" },
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "a", type: "function", function: { name: "read", arguments: "{}" } }],
        },
        { role: "user", content: "no tool result before me" },
      ];
      const response = await post(mock.url, { model: "m", stream: true, messages });
      assert.equal(response.status, 200);
      assert.match(await response.text(), /data: \[DONE\]/);
      assert.throws(
        () => mock.assertDone(),
        (error: Error) => {
          assert.match(error.message, /tool call a has no result/);
          assert.match(error.message, /wrong model/);
          assert.match(error.message, /1 scripted answer\(s\) were never requested/);
          return true;
        },
      );
    } finally {
      await mock.close();
    }
  });

  test("checkToolInvariant flags orphans, duplicates and non-object arguments", () => {
    const call = (id: string, args = "{}") => ({ id, type: "function", function: { name: "t", arguments: args } });
    assert.deepEqual(
      checkToolInvariant([
        { role: "assistant", tool_calls: [call("a"), call("b", "oops")] },
        { role: "tool", tool_call_id: "a" },
        { role: "tool", tool_call_id: "a" },
        { role: "tool", tool_call_id: "b" },
        { role: "user", content: "x" },
        { role: "tool", tool_call_id: "z" },
      ]),
      [
        "message 0: tool call b has arguments that are not a JSON object",
        "message 2: second tool result for a",
        "message 5: tool message z does not follow an assistant tool call",
      ],
    );
  });

  test("serves non-streaming requests and lists models", async () => {
    const mock = await startMockLlm({ models: ["alpha", "beta"] });
    try {
      mock.script(reply().reasoning("r").text("hi").toolCall("read", { a: 1 }, { id: "c" }).usage(3, 4));
      const completion = (await (await post(mock.url, { model: "m", stream: false, messages: [] })).json()) as {
        choices: Array<{ message: Record<string, unknown>; finish_reason: string }>;
        usage: { total_tokens: number };
      };
      assert.equal(completion.choices[0]?.message.content, "hi");
      assert.equal(completion.choices[0]?.message.reasoning_content, "r");
      assert.deepEqual(completion.choices[0]?.message.tool_calls, [
        { id: "c", type: "function", function: { name: "read", arguments: '{"a":1}' } },
      ]);
      assert.equal(completion.choices[0]?.finish_reason, "tool_calls");
      assert.equal(completion.usage.total_tokens, 7);
      const models = (await (await fetch(`${mock.url}/models`)).json()) as { data: Array<{ id: string }> };
      assert.deepEqual(
        models.data.map((m) => m.id),
        ["alpha", "beta"],
      );
      mock.assertDone();
    } finally {
      await mock.close();
    }
  });
});
