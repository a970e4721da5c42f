import assert from "node:assert/strict";
import { createServer } from "node:http";
import { type AddressInfo, createServer as createNetServer, type Socket } from "node:net";
import { after, before, describe, test } from "node:test";
import { createLlmClient, type LlmClient, type LlmStreamEvent } from "@crow/core";
import { closedPort, dropConnection, httpError, type MockLlm, reply, startMockLlm } from "@crow/testkit";

const user = [{ role: "user" as const, content: "hi" }];

describe("LLM client against the mock provider", () => {
  let mock: MockLlm;
  let llm: LlmClient;
  before(async () => {
    mock = await startMockLlm();
    llm = createLlmClient({ baseURL: mock.url, retry: { maxRetries: 2, baseDelayMs: 5, maxDelayMs: 2000 } });
  });
  after(() => mock.close());

  /** Streams one request and returns the result plus the events seen, with text after the last retry. */
  async function run(options: { signal?: AbortSignal; tools?: boolean } = {}) {
    const events: LlmStreamEvent[] = [];
    const result = await llm.stream(
      {
        model: "m",
        messages: user,
        ...(options.tools
          ? { tools: [{ type: "function" as const, function: { name: "read", parameters: { type: "object" } } }] }
          : {}),
      },
      { ...(options.signal ? { signal: options.signal } : {}), onEvent: (e) => events.push(e) },
    );
    let shown = "";
    for (const e of events) {
      if (e.type === "retry") shown = "";
      if (e.type === "text_delta") shown += e.text;
    }
    return { result, events, shown };
  }

  test("streams text and reports usage and finish reason", async () => {
    mock.script(reply().text("Hello, ").text("world", 3).usage(12, 4, { cached: 2 }));
    const { result, shown } = await run();
    assert.ok(result.ok);
    assert.equal(result.message.content, "Hello, world");
    assert.equal(shown, "Hello, world");
    assert.equal(result.finishReason, "stop");
    assert.deepEqual(result.usage, { promptTokens: 12, completionTokens: 4, totalTokens: 16, cachedTokens: 2 });
    const body = mock.requests.at(-1)?.body;
    assert.deepEqual(body?.stream_options, { include_usage: true });
    mock.assertDone();
  });

  test("reasoning in either field becomes reasoning, and content in the same delta is kept", async () => {
    mock.script(
      reply().reasoning("think A. ", "reasoning_content").reasoningAndText("think B. ", "Answer ").text("done"),
      reply().reasoning("other field", "reasoning").text("ok"),
    );
    const first = await run();
    assert.ok(first.result.ok);
    assert.equal(first.result.message.reasoning_content, "think A. think B. ");
    assert.equal(first.result.message.content, "Answer done");
    const second = await run();
    assert.ok(second.result.ok);
    assert.equal(second.result.message.reasoning_content, "other field");
    assert.equal(second.result.message.content, "ok");
    assert.ok(second.events.some((e) => e.type === "reasoning_delta" && e.text === "other field"));
    mock.assertDone();
  });

  test("assembles parallel tool calls split across chunks, by index", async () => {
    mock.script(
      reply()
        .text("Reading both.")
        .toolCall("read", { file_path: "a.txt" }, { id: "c1", split: 4 })
        .toolCall("read", { file_path: "b.txt", offset: 2 }, { id: "c2", split: 3 }),
    );
    const { result } = await run({ tools: true });
    assert.ok(result.ok);
    assert.equal(result.finishReason, "tool_calls");
    assert.deepEqual(
      result.toolCalls.map((c) => [c.id, c.name, c.args, c.status.kind]),
      [
        ["c1", "read", { file_path: "a.txt" }, "ok"],
        ["c2", "read", { file_path: "b.txt", offset: 2 }, "ok"],
      ],
    );
    assert.equal(result.message.tool_calls?.[1]?.function.arguments, '{"file_path":"b.txt","offset":2}');
    assert.equal(mock.requests.at(-1)?.body.parallel_tool_calls, true);
    mock.assertDone();
  });

  test("repairs malformed tool-call JSON and flags what it could not repair", async () => {
    mock.script(
      reply()
        .toolCall("write", '```json\n{"file_path": "x.txt", "content": "a",}\n```', { id: "r1" })
        .toolCall("read", '{"file_path": "y.txt"', { id: "r2" })
        .toolCall("read", "not json at all", { id: "r3" }),
    );
    const { result } = await run({ tools: true });
    assert.ok(result.ok);
    const [a, b, c] = result.toolCalls;
    assert.deepEqual(a?.args, { file_path: "x.txt", content: "a" });
    assert.equal(a?.status.kind, "repaired");
    assert.deepEqual(b?.args, { file_path: "y.txt" });
    assert.equal(c?.status.kind, "invalid");
    // What goes back into the history is valid JSON, so the next request is accepted by providers.
    for (const call of result.message.tool_calls ?? []) assert.doesNotThrow(() => JSON.parse(call.function.arguments));
    mock.assertDone();
  });

  test("429 with Retry-After is retried after the requested delay, then succeeds", async () => {
    mock.script(httpError(429, { retryAfter: 1, message: "slow down" }), reply().text("finally"));
    const { result, events } = await run();
    assert.ok(result.ok);
    assert.equal(result.message.content, "finally");
    assert.equal(result.attempts, 2);
    const retry = events.find((e) => e.type === "retry");
    assert.equal(retry?.type === "retry" && retry.delayMs, 1000);
    assert.equal(retry?.type === "retry" && retry.error.status, 429);
    mock.assertDone();
  });

  test("500s until retries are exhausted give a typed error with the provider's message", async () => {
    mock.script(
      httpError(500, { message: "upstream exploded" }),
      httpError(502, { message: "upstream exploded" }),
      httpError(503, { message: "upstream exploded" }),
    );
    const { result, events } = await run();
    assert.equal(result.ok, false);
    assert.ok(!result.ok);
    assert.equal(result.error.kind, "http");
    assert.equal(result.error.status, 503);
    assert.equal(result.error.message, "upstream exploded");
    assert.equal(result.error.attempts, 3);
    assert.equal(events.filter((e) => e.type === "retry").length, 2);
    mock.assertDone();
  });

  test("a 400 is not retried", async () => {
    mock.script(httpError(400, { message: "bad temperature" }));
    const { result } = await run();
    assert.ok(!result.ok);
    assert.equal(result.error.kind, "http");
    assert.equal(result.error.attempts, 1);
    mock.assertDone();
  });

  test("context length exceeded surfaces as its own kind", async () => {
    mock.script(
      httpError(400, {
        message: "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens.",
        code: "context_length_exceeded",
      }),
    );
    const { result } = await run();
    assert.ok(!result.ok);
    assert.equal(result.error.kind, "context_length_exceeded");
    assert.match(result.error.message, /maximum context length/);
    mock.assertDone();
  });

  test("a stream that dies midway is retried and the text is not duplicated", async () => {
    mock.script(reply().text("Hello, ").text("wor").dropConnection(), reply().text("Hello, ").text("world"));
    const { result, shown, events } = await run();
    assert.ok(result.ok);
    assert.equal(result.message.content, "Hello, world");
    assert.equal(shown, "Hello, world");
    assert.ok(events.some((e) => e.type === "retry" && e.error.kind === "network"));
    mock.assertDone();
  });

  test("a connection dropped before any response is retried", async () => {
    mock.script(dropConnection(), reply().text("ok"));
    const { result } = await run();
    assert.ok(result.ok);
    assert.equal(result.message.content, "ok");
    mock.assertDone();
  });

  test("malformed chunks are skipped, the rest of the stream is kept", async () => {
    mock.script(reply().text("a").malformed().text("b"));
    const { result } = await run();
    assert.ok(result.ok);
    assert.equal(result.message.content, "ab");
    mock.assertDone();
  });

  test("finish reasons length and content_filter are reported", async () => {
    mock.script(reply().text("cut").finish("length"), reply().finish("content_filter"));
    const a = await run();
    assert.ok(a.result.ok);
    assert.equal(a.result.finishReason, "length");
    const b = await run();
    assert.ok(b.result.ok);
    assert.equal(b.result.finishReason, "content_filter");
    mock.assertDone();
  });

  test("abort mid-stream returns an aborted result with the partial text, no retry", async () => {
    mock.script(reply().text("partial ").hang());
    const controller = new AbortController();
    const events: LlmStreamEvent[] = [];
    const pending = llm.stream(
      { model: "m", messages: user },
      {
        signal: controller.signal,
        onEvent: (e) => {
          events.push(e);
          if (e.type === "text_delta") controller.abort();
        },
      },
    );
    const result = await pending;
    assert.ok(!result.ok);
    assert.equal(result.error.kind, "aborted");
    assert.equal(result.partial.content, "partial ");
    assert.equal(mock.requests.length > 0, true);
    assert.ok(!events.some((e) => e.type === "retry"));
    mock.assertDone();
  });

  test("reasoning is sent back by default and stripped with sendReasoning: false", async () => {
    const history = [
      { role: "user" as const, content: "q" },
      { role: "assistant" as const, content: "a", reasoning_content: "because" },
      { role: "user" as const, content: "q2" },
    ];
    mock.script(
      reply()
        .text("1")
        .expect((req) => assert.equal(req.body.messages[1]?.reasoning_content, "because")),
      reply()
        .text("2")
        .expect((req) => assert.equal("reasoning_content" in (req.body.messages[1] ?? {}), false)),
    );
    await llm.stream({ model: "m", messages: history });
    const plain = createLlmClient({ baseURL: mock.url, sendReasoning: false });
    await plain.stream({ model: "m", messages: history });
    mock.assertDone();
  });

  test("message ids are Crow's: stored with the messages, never sent to the provider", async () => {
    const history = [
      { role: "user" as const, id: "u-1", content: "q", original: [{ type: "text", text: "q" }] },
      { role: "assistant" as const, id: "a-1", content: "a", reasoning_content: "because" },
      { role: "user" as const, id: "u-2", content: "q2" },
    ];
    const sent = (req: { body: { messages: unknown[] } }) =>
      assert.deepEqual(req.body.messages, [
        { role: "user", content: "q" },
        { role: "assistant", content: "a", reasoning_content: "because" },
        { role: "user", content: "q2" },
      ]);
    mock.script(reply().text("1").expect(sent), reply().text("2").expect(sent));
    await llm.stream({ model: "m", messages: history });
    // Again from the per-message cache.
    await llm.stream({ model: "m", messages: history });
    mock.assertDone();
  });

  test("the body carries the params, tools, extra fields and the whole history, also when the history grows", async () => {
    const tools = [{ type: "function" as const, function: { name: "read", parameters: { type: "object" } } }];
    const history: Array<{ role: "user" | "assistant"; content: string }> = [
      { role: "user", content: "héllo — “quoted” \u2028 😀" },
    ];
    const params = { temperature: 0.2, parallel_tool_calls: false, extra: { top_k: 5, messages: "ignored" } };
    for (const text of ["one", "two"]) {
      const expected = history.map((m) => ({ ...m }));
      mock.script(
        reply()
          .text(text)
          .expect((req) => {
            assert.match(String(req.headers["content-type"]), /^application\/json/);
            assert.deepEqual(req.body, {
              model: "m",
              messages: expected,
              stream: true,
              stream_options: { include_usage: true },
              temperature: 0.2,
              tools,
              parallel_tool_calls: false,
              top_k: 5,
            });
          }),
      );
      const result = await llm.stream({ model: "m", messages: [...history], tools, params });
      assert.ok(result.ok);
      history.push({ role: "assistant", content: result.message.content ?? "" }, { role: "user", content: "more" });
    }
    mock.assertDone();
  });

  /**
   * A provider answering every request with one text chunk and [DONE], then ending the response `endAfterMs` later
   * (never, when undefined), as real servers do when the end arrives in its own packet.
   */
  async function lingeringProvider(endAfterMs: number | undefined) {
    const sockets = new Set<Socket>();
    let ended = Promise.resolve();
    const server = createServer((req, res) => {
      req.resume();
      ended = new Promise((resolve) => res.once("finish", () => resolve()));
      res.writeHead(200, { "content-type": "text/event-stream" });
      const chunk = { choices: [{ index: 0, delta: { content: "done already" }, finish_reason: "stop" }] };
      res.write(`data: ${JSON.stringify(chunk)}\n\ndata: [DONE]\n\n`);
      if (endAfterMs !== undefined) setTimeout(() => res.end(), endAfterMs);
    });
    server.on("connection", (socket) => sockets.add(socket));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    return {
      url: `http://127.0.0.1:${port}/v1`,
      connections: () => sockets.size,
      /** Resolves once the last response has been ended by the server. */
      ended: () => ended,
      close: async () => {
        for (const socket of sockets) socket.destroy();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      },
    };
  }

  test("consecutive requests reuse one connection (no new TCP or TLS handshake per LLM round)", async () => {
    const provider = await lingeringProvider(5);
    try {
      const client = createLlmClient({ baseURL: provider.url, retry: { maxRetries: 0 } });
      for (let i = 0; i < 4; i++) {
        const result = await client.stream({ model: "m", messages: user });
        assert.ok(result.ok);
        assert.equal(result.message.content, "done already");
        // The rest of the body (after [DONE]) is read in the background: let it end and reach the client.
        await provider.ended();
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.equal(provider.connections(), 1);
    } finally {
      await provider.close();
    }
  });

  test("a server that keeps the response open after [DONE] does not hold up the answer", async () => {
    const provider = await lingeringProvider(undefined);
    try {
      const client = createLlmClient({ baseURL: provider.url, retry: { maxRetries: 0 } });
      const result = await client.stream({ model: "m", messages: user });
      assert.ok(result.ok);
      assert.equal(result.message.content, "done already");
      assert.equal(result.finishReason, "stop");
    } finally {
      await provider.close();
    }
  });

  test("a stream that stalls past the idle timeout is retried as a timeout", async () => {
    const impatient = createLlmClient({ baseURL: mock.url, idleTimeoutMs: 100, retry: { baseDelayMs: 1 } });
    mock.script(reply().text("stuck ").delay(1000).text("never"), reply().text("fresh"));
    const events: LlmStreamEvent[] = [];
    const result = await impatient.stream({ model: "m", messages: user }, { onEvent: (e) => events.push(e) });
    assert.ok(result.ok);
    assert.equal(result.message.content, "fresh");
    assert.ok(events.some((e) => e.type === "retry" && e.error.kind === "timeout"));
    mock.assertDone();
  });

  test("connection refused before any server answered: one attempt (nothing listens there), with its code", async () => {
    const port = await closedPort();
    const dead = createLlmClient({
      baseURL: `http://127.0.0.1:${port}/v1`,
      retry: { maxRetries: 4, baseDelayMs: 60_000 },
    });
    const events: LlmStreamEvent[] = [];
    const result = await dead.stream({ model: "m", messages: user }, { onEvent: (e) => events.push(e) });
    assert.ok(!result.ok);
    assert.equal(result.error.kind, "network");
    assert.equal(result.error.code, "ECONNREFUSED");
    assert.equal(result.error.attempts, 1);
    assert.deepEqual(events, []);
  });

  test("connection refused after the server once answered is retried (a restart, not a wrong URL)", async () => {
    const once = await startMockLlm();
    const client = createLlmClient({ baseURL: once.url, retry: { maxRetries: 1, baseDelayMs: 1 } });
    once.script(reply().text("up"));
    assert.ok((await client.stream({ model: "m", messages: user })).ok);
    await once.close();
    const result = await client.stream({ model: "m", messages: user });
    assert.ok(!result.ok);
    assert.equal(result.error.code, "ECONNREFUSED");
    assert.equal(result.error.attempts, 2);
  });

  test("an unknown model and a plain-text 401 are typed, not retried", async () => {
    mock.script(httpError(404, { message: "The model `x` does not exist", code: "model_not_found" }));
    const missing = await run();
    assert.ok(!missing.result.ok);
    assert.equal(missing.result.error.kind, "unknown_model");
    assert.equal(missing.result.error.attempts, 1);
    mock.script({ kind: "http_error", status: 401, headers: { "content-type": "text/plain" }, body: "Unauthorized" });
    const denied = await run();
    assert.ok(!denied.result.ok);
    assert.equal(denied.result.error.kind, "auth");
    assert.equal(denied.result.error.status, 401);
    assert.match(denied.result.error.message, /Unauthorized/);
    mock.assertDone();
  });

  test("a key or credential header the provider echoes in an error is replaced, in retries and the result", async () => {
    const key = "sk-core-test-7d2a6e58c1";
    const token = "tok-header-secret-99";
    const keyed = createLlmClient({
      baseURL: mock.url,
      apiKey: key,
      headers: { "X-Api-Token": `Bearer ${token}` },
      retry: { maxRetries: 1, baseDelayMs: 1 },
    });
    const echo = () => httpError(503, { message: `bad key ${key} or token ${token}` });
    mock.script(echo(), echo());
    const events: LlmStreamEvent[] = [];
    const result = await keyed.stream({ model: "m", messages: user }, { onEvent: (e) => events.push(e) });
    assert.ok(!result.ok);
    assert.equal(result.error.message, "bad key [redacted] or token [redacted]");
    const retry = events.find((e) => e.type === "retry");
    assert.ok(retry?.type === "retry");
    assert.equal(retry.error.message, "bad key [redacted] or token [redacted]");
    mock.assertDone();
  });

  test("a provider that hangs up on every request is a network error after retries", async () => {
    // It accepts connections and closes them at once (a proxy whose backend is down): unlike a refused connection,
    // something is there, so it is retried.
    const hangUp = createNetServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => hangUp.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = hangUp.address() as AddressInfo;
      const dead = createLlmClient({
        baseURL: `http://127.0.0.1:${port}/v1`,
        retry: { maxRetries: 1, baseDelayMs: 1 },
      });
      const result = await dead.stream({ model: "m", messages: user });
      assert.ok(!result.ok);
      assert.equal(result.error.kind, "network");
      assert.equal(result.error.attempts, 2);
    } finally {
      await new Promise((resolve) => hangUp.close(resolve));
    }
  });
});
