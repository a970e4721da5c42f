/**
 * Builders for the scripted replies of the mock LLM (see mock-llm.ts). One `MockTurn` answers one request.
 *
 *   reply().reasoning("Let me look.").text("Reading it now.").toolCall("read", { file_path: "a.txt" }).usage(100, 20)
 *   httpError(429, { retryAfter: 1 }), dropConnection(), reply().text("Hel").dropConnection()
 */

/** A request as the mock received it. */
export interface CapturedRequest {
  /** 0-based position among all chat-completions requests. */
  index: number;
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** The parsed JSON body (model, messages, tools, stream, stream_options, …). */
  body: ChatRequestBody;
  /** The body's size as sent, in bytes (what a request costs: `bench/tokens.bench.ts` sums them). */
  bytes: number;
}

/** The fields of a chat-completions request body the tests usually look at. */
export interface ChatRequestBody {
  model?: string;
  messages: MockMessage[];
  tools?: Array<{ type: string; function: { name: string; description?: string; parameters?: unknown } }>;
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  [key: string]: unknown;
}

/** A message of a captured request (OpenAI shape). */
export interface MockMessage {
  role: string;
  content?: unknown;
  reasoning_content?: string;
  tool_calls?: Array<{ id: string; type?: string; function: { name: string; arguments: string } }>;
  tool_call_id?: string;
}

/** A check on the request of one turn; throw (e.g. `assert.equal`) to record a failure. */
export type Expectation = (request: CapturedRequest) => void;

/** One step of a streamed reply. */
export type StreamStep =
  | { kind: "chunk"; data: Record<string, unknown> }
  | { kind: "raw"; text: string }
  | { kind: "delay"; ms: number }
  | { kind: "drop" }
  | { kind: "hang" };

/** One scripted answer. */
export type MockTurn =
  | {
      kind: "stream";
      steps: StreamStep[];
      finishReason: string | null;
      usage?: MockUsage;
      done: boolean;
      expect?: Expectation;
    }
  /** A fixed HTTP response: an error status, or a 200 JSON completion (see `jsonCompletion`). */
  | { kind: "http_error"; status: number; headers: Record<string, string>; body: string; expect?: Expectation }
  | { kind: "drop"; expect?: Expectation };

export interface MockUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens: number };
  completion_tokens_details?: { reasoning_tokens: number };
}

/** Options of `ReplyBuilder.toolCall`. */
export interface ToolCallOptions {
  /** Default `call_<n>` (unique within the mock). */
  id?: string;
  /** Number of chunks the argument text is split into (default 2). */
  split?: number;
  /** Tool call index in the message (default: its position). */
  index?: number;
}

let callCounter = 0;

function delta(d: Record<string, unknown>): StreamStep {
  return { kind: "chunk", data: { choices: [{ index: 0, delta: d, finish_reason: null }] } };
}

function splitText(text: string, parts: number): string[] {
  const n = Math.max(1, Math.min(parts, text.length || 1));
  const size = Math.ceil(text.length / n);
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out.length > 0 ? out : [""];
}

/** A streamed reply under construction. Each method appends to the stream, in order. */
export class ReplyBuilder {
  private readonly steps: StreamStep[] = [];
  private finishReason: string | null | undefined;
  private usageValue: MockUsage | undefined;
  private done = true;
  private toolCalls = 0;
  private expectation: Expectation | undefined;

  /** Visible text, optionally split into `chunks` deltas. */
  text(text: string, chunks = 1): this {
    for (const part of splitText(text, chunks)) this.steps.push(delta({ role: "assistant", content: part }));
    return this;
  }

  /** Reasoning text in `reasoning_content` (DeepSeek, vLLM, llama.cpp) or `reasoning` (OpenRouter, Ollama). */
  reasoning(text: string, field: "reasoning_content" | "reasoning" = "reasoning_content", chunks = 1): this {
    for (const part of splitText(text, chunks)) this.steps.push(delta({ [field]: part }));
    return this;
  }

  /** A delta carrying reasoning and content together (a provider quirk upstream mishandled). */
  reasoningAndText(
    reasoning: string,
    text: string,
    field: "reasoning_content" | "reasoning" = "reasoning_content",
  ): this {
    this.steps.push(delta({ [field]: reasoning, content: text }));
    return this;
  }

  /** A tool call; `args` is an object (serialised) or raw argument text (for malformed JSON). */
  toolCall(name: string, args: Record<string, unknown> | string, options: ToolCallOptions = {}): this {
    const index = options.index ?? this.toolCalls;
    this.toolCalls++;
    const id = options.id ?? `call_${++callCounter}`;
    const text = typeof args === "string" ? args : JSON.stringify(args);
    const parts = splitText(text, options.split ?? 2);
    parts.forEach((part, i) => {
      const fragment: Record<string, unknown> = { index, function: { arguments: part } };
      if (i === 0) Object.assign(fragment, { id, type: "function", function: { name, arguments: part } });
      this.steps.push(delta({ tool_calls: [fragment] }));
    });
    return this;
  }

  /** Token usage, sent as the final chunk with empty `choices` (as OpenAI does with include_usage). */
  usage(prompt: number, completion: number, extra: { cached?: number; reasoning?: number } = {}): this {
    this.usageValue = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
    if (extra.cached !== undefined) this.usageValue.prompt_tokens_details = { cached_tokens: extra.cached };
    if (extra.reasoning !== undefined)
      this.usageValue.completion_tokens_details = { reasoning_tokens: extra.reasoning };
    return this;
  }

  /** Finish reason (default: `tool_calls` when the reply has tool calls, else `stop`); null sends none. */
  finish(reason: "stop" | "length" | "tool_calls" | "content_filter" | null | (string & {})): this {
    this.finishReason = reason;
    return this;
  }

  /** Waits before the next step. */
  delay(ms: number): this {
    this.steps.push({ kind: "delay", ms });
    return this;
  }

  /** A `data:` line that is not JSON. */
  malformed(text = "{this is not json"): this {
    this.steps.push({ kind: "raw", text: `data: ${text}\n\n` });
    return this;
  }

  /** Any chunk object, sent as is. */
  chunk(data: Record<string, unknown>): this {
    this.steps.push({ kind: "chunk", data });
    return this;
  }

  /** Destroys the connection at this point (a stream that dies midway). Nothing after it is sent. */
  dropConnection(): this {
    this.steps.push({ kind: "drop" });
    return this;
  }

  /** Keeps the connection open and silent until the client goes away (for cancellation tests). */
  hang(): this {
    this.steps.push({ kind: "hang" });
    return this;
  }

  /** Ends without `data: [DONE]`. */
  withoutDone(): this {
    this.done = false;
    return this;
  }

  /** Checks the request this reply answers. */
  expect(check: Expectation): this {
    this.expectation = check;
    return this;
  }

  build(): MockTurn {
    const finishReason =
      this.finishReason === undefined ? (this.toolCalls > 0 ? "tool_calls" : "stop") : this.finishReason;
    const turn: MockTurn = { kind: "stream", steps: [...this.steps], finishReason, done: this.done };
    if (this.usageValue) turn.usage = this.usageValue;
    if (this.expectation) turn.expect = this.expectation;
    return turn;
  }
}

/** Starts a streamed reply. */
export function reply(): ReplyBuilder {
  return new ReplyBuilder();
}

/** Shortcut: a reply with just this text. */
export function textReply(text: string): ReplyBuilder {
  return reply().text(text);
}

/** An HTTP error answer; `retryAfter` in seconds; `message` goes into an OpenAI-style error body. */
export function httpError(
  status: number,
  options: { retryAfter?: number; message?: string; code?: string; body?: string; expect?: Expectation } = {},
): MockTurn {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (options.retryAfter !== undefined) headers["retry-after"] = String(options.retryAfter);
  const body =
    options.body ??
    JSON.stringify({
      error: { message: options.message ?? `mock error ${status}`, type: "mock_error", code: options.code ?? null },
    });
  const turn: MockTurn = { kind: "http_error", status, headers, body };
  if (options.expect) turn.expect = options.expect;
  return turn;
}

/** Closes the connection without any response. */
export function dropConnection(expect?: Expectation): MockTurn {
  return expect ? { kind: "drop", expect } : { kind: "drop" };
}
