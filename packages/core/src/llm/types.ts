import type { AssistantMessage, ChatMessage, ToolDefinition, Usage } from "../messages.js";

/** Sampling and request options sent with every completion request. */
export interface RequestParams {
  temperature?: number;
  top_p?: number;
  max_tokens?: number;
  /** Default true: the loop runs the calls of one message in parallel anyway. */
  parallel_tool_calls?: boolean;
  /** Provider-specific fields merged into the request body as is (e.g. `reasoning_effort`). */
  extra?: Record<string, unknown>;
}

/** One streaming chat-completions request. */
export interface LlmRequest {
  model: string;
  messages: ChatMessage[];
  tools?: ToolDefinition[];
  params?: RequestParams;
}

/** Why the model stopped, as the provider said (`unknown` for anything else or nothing). */
export type FinishReason = "stop" | "length" | "tool_calls" | "content_filter" | "unknown";

/** What went wrong, in a form the loop and the ACP layer can act on without parsing messages. */
export type LlmErrorKind =
  /** The caller's AbortSignal fired. */
  | "aborted"
  /** The prompt does not fit the model's context window (compact and retry). */
  | "context_length_exceeded"
  /** 401/403: bad or missing API key. */
  | "auth"
  /** Any other HTTP error status (after retries when retryable). */
  | "http"
  /** Connection refused/reset, DNS failure, a stream that died midway (after retries); `code` has the system code. */
  | "network"
  /** The TLS handshake failed (self-signed or expired certificate, wrong host name); `code` has OpenSSL's code. */
  | "tls"
  /** The provider does not know the requested model (404 or 400 naming the model). */
  | "unknown_model"
  /** No response or no chunk within the configured timeouts (after retries). */
  | "timeout"
  /** The provider answered something that is not a chat-completions stream. */
  | "invalid_response";

/** A provider failure. `message` is the provider's own message when it sent one. */
export interface LlmError {
  kind: LlmErrorKind;
  message: string;
  /** HTTP status, when the failure was an HTTP response. */
  status?: number;
  /**
   * The provider's error code (e.g. `context_length_exceeded`, `rate_limit_exceeded`), when sent; for `network` and
   * `tls` failures the system's code (`ECONNREFUSED`, `ENOTFOUND`, `DEPTH_ZERO_SELF_SIGNED_CERT`…), when known.
   */
  code?: string;
  /** Whether this kind of failure is retried (it was, if attempts > 1). */
  retryable: boolean;
  /** How many requests were made in total. */
  attempts: number;
}

/**
 * Streaming events of one `LlmClient.stream` call, delivered synchronously while chunks arrive.
 *
 * Retry contract: a `retry` event means the attempt in progress failed and the request starts over, so every
 * `text_delta`/`reasoning_delta`/`tool_call_delta` received since the previous `retry` (or the start) must be
 * discarded by consumers that render or store partial output. The final result never contains text of a failed
 * attempt, so nothing is duplicated.
 */
export type LlmStreamEvent =
  | { type: "text_delta"; text: string }
  | { type: "reasoning_delta"; text: string }
  /** A fragment of tool call `index`; `id`/`name` appear on the first fragment that carries them. */
  | { type: "tool_call_delta"; index: number; id?: string; name?: string; argumentsDelta: string }
  /** The attempt failed with a retryable error; the request is re-sent after `delayMs`. */
  | { type: "retry"; attempt: number; delayMs: number; error: LlmError };

/** How a tool call's argument text was turned into an object. */
export type ArgumentsStatus =
  /** Valid JSON object as sent. */
  | { kind: "ok" }
  /** Malformed, but repaired (trailing commas, unclosed braces or strings, code fences…). */
  | { kind: "repaired"; original: string }
  /** Not recoverable: the loop answers the call with an error tool result. */
  | { kind: "invalid"; original: string; error: string };

/** A fully assembled tool call of the response. */
export interface AssembledToolCall {
  /** The provider's id, or a generated `call_…` id when the provider sent none. */
  id: string;
  name: string;
  /** Parsed arguments (`{}` when invalid). */
  args: Record<string, unknown>;
  /** The JSON text stored in the assistant message (repaired text, or `{}` when invalid). */
  arguments: string;
  status: ArgumentsStatus;
}

/** A completed response. */
export interface LlmSuccess {
  ok: true;
  /** The assistant message to append (content, reasoning_content, tool_calls with repaired arguments). */
  message: AssistantMessage;
  toolCalls: AssembledToolCall[];
  finishReason: FinishReason;
  usage?: Usage;
  /** Requests made, including retried ones. */
  attempts: number;
}

/** A failed request. `partial` holds what the last attempt streamed (used to keep partial text on cancel). */
export interface LlmFailure {
  ok: false;
  error: LlmError;
  partial: { content: string; reasoning: string };
  usage?: Usage;
}

export type LlmResult = LlmSuccess | LlmFailure;

/** Options of one `stream` call. */
export interface LlmCallOptions {
  signal?: AbortSignal;
  /** Receives streaming events as they arrive; exceptions thrown by it are ignored. */
  onEvent?: (event: LlmStreamEvent) => void;
}

/**
 * An OpenAI-compatible streaming chat-completions client.
 *
 * Contract: `stream` never throws and never rejects. Every failure, including abort, is an `LlmFailure`.
 */
export interface LlmClient {
  stream(request: LlmRequest, options?: LlmCallOptions): Promise<LlmResult>;
}

/** Retry policy: exponential backoff with full jitter, `Retry-After` honoured (capped at `maxDelayMs`). */
export interface RetryPolicy {
  /** Retries after the first attempt (default 4). */
  maxRetries?: number;
  /** First backoff step (default 500 ms). */
  baseDelayMs?: number;
  /** Upper bound of one wait, including a provider's Retry-After (default 30 000 ms). */
  maxDelayMs?: number;
}

/** Configuration of `createLlmClient`. */
export interface LlmClientOptions {
  /** e.g. `https://api.openai.com/v1`, `http://127.0.0.1:11434/v1`. */
  baseURL: string;
  /** Sent as a Bearer token; local servers accept any string (default "not-needed"). */
  apiKey?: string;
  /** Extra headers on every request. */
  headers?: Record<string, string>;
  retry?: RetryPolicy;
  /** Time to wait for response headers (default 120 000 ms). */
  connectTimeoutMs?: number;
  /**
   * Whether assistant `reasoning_content` is sent back in requests (default true: reasoning models that call tools
   * often need it). Set false for providers that reject the field.
   */
  sendReasoning?: boolean;
  /** Longest silence between two chunks of a stream before the attempt is abandoned (default 300 000 ms). */
  idleTimeoutMs?: number;
}
