import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { answerEmbeddings, type EmbeddingRequest, type MockEmbeddingOptions } from "./mock-embeddings.js";
import {
  type CapturedRequest,
  type ChatRequestBody,
  type MockMessage,
  type MockTurn,
  ReplyBuilder,
  type StreamStep,
} from "./mock-llm-script.js";

export * from "./mock-embeddings.js";
export * from "./mock-llm-script.js";

/** A scripted OpenAI-compatible server on 127.0.0.1 (see `startMockLlm`). */
export interface MockLlm {
  /** Base URL to configure as the provider's `baseURL` (ends with `/v1`). */
  readonly url: string;
  readonly port: number;
  /** Appends scripted answers; each answers one chat-completions request, in order. Builders are built for you. */
  script(...turns: Array<MockTurn | ReplyBuilder>): MockLlm;
  /** Every chat-completions request received so far. */
  readonly requests: readonly CapturedRequest[];
  /** Every `/v1/embeddings` request received so far (answered by the deterministic mock embedder). */
  readonly embeddingRequests: readonly EmbeddingRequest[];
  /** Failed expectations, unscripted requests, and invariant violations, as messages. */
  readonly failures: readonly string[];
  /**
   * Answers every request the script has no answer for with `responder(request)` (a model whose answer depends on
   * what it was sent: tests where the number of requests is not known in advance). `undefined` stops it.
   */
  respond(responder: ((request: CapturedRequest) => MockTurn | ReplyBuilder) | undefined): MockLlm;
  /** Scripted answers not used yet. */
  pending(): number;
  /** Resolves when `count` requests have arrived (for cancellation tests). */
  waitForRequests(count: number): Promise<void>;
  /** Throws if any failure was recorded or scripted answers remain. */
  assertDone(): void;
  /** Stops the server and cuts open connections. */
  close(): Promise<void>;
}

/** Options of `startMockLlm`. */
export interface MockLlmOptions {
  /** Model ids listed by `GET /v1/models` (default ["mock-model"]). */
  models?: string[];
  /** Settings of the deterministic `POST /v1/embeddings` (always served; see mock-embeddings.ts). */
  embeddings?: MockEmbeddingOptions;
}

/**
 * Checks the tool-call/tool-result invariant providers enforce: each assistant `tool_calls[i].id` is answered by
 * exactly one `tool` message right after the assistant message, no orphan tool messages, and every call's
 * arguments are a JSON object. Returns the violations (empty when the history is valid).
 */
export function checkToolInvariant(messages: readonly MockMessage[]): string[] {
  const problems: string[] = [];
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i] as MockMessage;
    if (message.role === "tool") {
      problems.push(`message ${i}: tool message ${message.tool_call_id} does not follow an assistant tool call`);
      continue;
    }
    if (message.role !== "assistant" || !message.tool_calls || message.tool_calls.length === 0) continue;
    const expected = message.tool_calls.map((c) => c.id);
    for (const call of message.tool_calls) {
      try {
        const args: unknown = JSON.parse(call.function.arguments);
        if (typeof args !== "object" || args === null || Array.isArray(args)) throw new Error("not an object");
      } catch {
        problems.push(`message ${i}: tool call ${call.id} has arguments that are not a JSON object`);
      }
    }
    const seen: string[] = [];
    let j = i + 1;
    for (; j < messages.length && messages[j]?.role === "tool"; j++) {
      const id = (messages[j] as MockMessage).tool_call_id ?? "";
      if (!expected.includes(id)) problems.push(`message ${j}: tool result ${id} answers no call of message ${i}`);
      else if (seen.includes(id)) problems.push(`message ${j}: second tool result for ${id}`);
      seen.push(id);
    }
    for (const id of expected) if (!seen.includes(id)) problems.push(`message ${i}: tool call ${id} has no result`);
    i = j - 1;
  }
  return problems;
}

/** Starts the mock on 127.0.0.1:0. Use from tests in-process; spawned agents reach it by `url`. */
export async function startMockLlm(options: MockLlmOptions = {}): Promise<MockLlm> {
  const queue: MockTurn[] = [];
  const requests: CapturedRequest[] = [];
  const failures: string[] = [];
  const embeddingRequests: EmbeddingRequest[] = [];
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  let responder: ((request: CapturedRequest) => MockTurn | ReplyBuilder) | undefined;

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      // Not errorText: the testkit imports no Crow package (the fake stays independent of the code under test).
      failures.push(`mock LLM crashed: ${error instanceof Error ? error.message : String(error)}`);
      res.destroy();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    const raw = await readBody(req);
    if (req.method === "GET" && path.endsWith("/models")) {
      const data = (options.models ?? ["mock-model"]).map((id) => ({ id, object: "model", owned_by: "mock" }));
      sendJson(res, 200, { object: "list", data });
      return;
    }
    if (req.method === "POST" && path.endsWith("/embeddings")) {
      answerEmbeddings(raw, res, options.embeddings ?? {}, embeddingRequests);
      return;
    }
    if (req.method !== "POST" || !path.endsWith("/chat/completions")) {
      sendJson(res, 404, { error: { message: `mock LLM: no route ${req.method} ${path}` } });
      return;
    }
    let body: ChatRequestBody;
    try {
      body = JSON.parse(raw) as ChatRequestBody;
    } catch {
      failures.push(`request ${requests.length}: body is not JSON`);
      sendJson(res, 400, { error: { message: "mock LLM: body is not JSON" } });
      return;
    }
    const request: CapturedRequest = {
      index: requests.length,
      method: req.method,
      path,
      headers: req.headers,
      body,
      bytes: Buffer.byteLength(raw),
    };
    requests.push(request);
    for (const waiter of [...waiters]) {
      if (requests.length >= waiter.count) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    }
    for (const problem of checkToolInvariant(Array.isArray(body.messages) ? body.messages : [])) {
      failures.push(`request ${request.index}: invariant violated: ${problem}`);
    }
    const answer = queue.shift() ?? responder?.(request);
    const turn = answer instanceof ReplyBuilder ? answer.build() : answer;
    if (!turn) {
      failures.push(`request ${request.index}: unscripted request (last message: ${describeLast(body)})`);
      sendJson(res, 500, { error: { message: "mock LLM: unscripted request", type: "mock_error" } });
      return;
    }
    if (turn.expect) {
      try {
        turn.expect(request);
      } catch (error) {
        failures.push(
          `request ${request.index}: expectation failed: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
    }
    if (turn.kind === "drop") {
      req.socket.destroy();
      return;
    }
    if (turn.kind === "http_error") {
      res.writeHead(turn.status, turn.headers);
      res.end(turn.body);
      return;
    }
    if (body.stream === false) {
      sendJson(res, 200, completionOf(turn.steps, turn.finishReason, turn.usage));
      return;
    }
    await streamTurn(req, res, turn, body.model ?? "mock-model");
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;

  const mock: MockLlm = {
    url: `http://127.0.0.1:${port}/v1`,
    port,
    requests,
    embeddingRequests,
    failures,
    script(...turns) {
      for (const turn of turns) queue.push(turn instanceof ReplyBuilder ? turn.build() : turn);
      return mock;
    },
    respond(next) {
      responder = next;
      return mock;
    },
    pending: () => queue.length,
    waitForRequests(count) {
      if (requests.length >= count) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ count, resolve }));
    },
    assertDone() {
      const problems = [...failures];
      if (queue.length > 0) problems.push(`${queue.length} scripted answer(s) were never requested`);
      if (problems.length > 0) throw new Error(`mock LLM:\n  ${problems.join("\n  ")}`);
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return mock;
}

async function streamTurn(
  req: IncomingMessage,
  res: ServerResponse,
  turn: Extract<MockTurn, { kind: "stream" }>,
  model: string,
): Promise<void> {
  const id = `chatcmpl-mock-${Math.random().toString(36).slice(2, 10)}`;
  const created = Math.floor(Date.now() / 1000);
  let closed = false;
  res.on("close", () => {
    closed = true;
  });
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
  const send = (data: Record<string, unknown>) =>
    res.write(`data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, ...data })}\n\n`);
  for (const step of turn.steps) {
    if (closed) return;
    if (step.kind === "chunk") send(step.data);
    else if (step.kind === "raw") res.write(step.text);
    else if (step.kind === "delay") await new Promise((resolve) => setTimeout(resolve, step.ms));
    else if (step.kind === "drop") {
      // Let the chunks written so far reach the client, then cut the connection without ending the response.
      await new Promise((resolve) => setTimeout(resolve, 10));
      req.socket.destroy();
      return;
    } else if (step.kind === "hang") {
      await new Promise<void>((resolve) => (closed ? resolve() : res.once("close", () => resolve())));
      return;
    }
  }
  if (closed) return;
  if (turn.finishReason !== null) send({ choices: [{ index: 0, delta: {}, finish_reason: turn.finishReason }] });
  if (turn.usage) send({ choices: [], usage: turn.usage });
  if (turn.done) res.write("data: [DONE]\n\n");
  res.end();
}

/** Assembles a non-streaming completion from the scripted steps (for `stream: false` requests). */
function completionOf(steps: StreamStep[], finishReason: string | null, usage: unknown): Record<string, unknown> {
  let content = "";
  let reasoning = "";
  const calls = new Map<number, { id: string; type: "function"; function: { name: string; arguments: string } }>();
  for (const step of steps) {
    if (step.kind !== "chunk") continue;
    const choices = step.data.choices as Array<{ delta?: Record<string, unknown> }> | undefined;
    const d = choices?.[0]?.delta ?? {};
    if (typeof d.content === "string") content += d.content;
    if (typeof d.reasoning_content === "string") reasoning += d.reasoning_content;
    if (typeof d.reasoning === "string") reasoning += d.reasoning;
    for (const f of (d.tool_calls as Array<Record<string, unknown>> | undefined) ?? []) {
      const index = f.index as number;
      const fn = f.function as { name?: string; arguments?: string } | undefined;
      const call = calls.get(index) ?? { id: "", type: "function" as const, function: { name: "", arguments: "" } };
      if (typeof f.id === "string") call.id = f.id;
      if (fn?.name) call.function.name = fn.name;
      call.function.arguments += fn?.arguments ?? "";
      calls.set(index, call);
    }
  }
  const message: Record<string, unknown> = { role: "assistant", content: content || null };
  if (reasoning) message.reasoning_content = reasoning;
  if (calls.size > 0) message.tool_calls = [...calls.values()];
  return {
    id: "chatcmpl-mock",
    object: "chat.completion",
    choices: [{ index: 0, message, finish_reason: finishReason }],
    ...(usage ? { usage } : {}),
  };
}

function describeLast(body: ChatRequestBody): string {
  const last = Array.isArray(body.messages) ? body.messages[body.messages.length - 1] : undefined;
  if (!last) return "none";
  const content = typeof last.content === "string" ? last.content : JSON.stringify(last.content ?? "");
  return `${last.role}: ${content.slice(0, 80)}`;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}
