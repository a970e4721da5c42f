import type * as OpenAiSdk from "openai";
import { StreamErrorPayload } from "./accumulator.js";
import type { LlmError, RetryPolicy } from "./types.js";

/**
 * The SDK's error classes. The SDK loads with a client's first request (see client.ts), so before that no SDK error
 * can exist and the checks that need them are skipped.
 */
export type SdkErrors = Pick<
  typeof OpenAiSdk,
  "APIConnectionError" | "APIConnectionTimeoutError" | "APIError" | "APIUserAbortError"
>;

/** Thrown inside an attempt when the stream ended before the provider said it was finished. */
export class IncompleteStreamError extends Error {}

/** Thrown inside an attempt when the answer is not a chat completion at all. */
export class InvalidResponseError extends Error {}

/** Thrown inside an attempt when no chunk arrived within the idle timeout. */
export class IdleTimeoutError extends Error {}

/** Provider phrasings of "the prompt is too long" (OpenAI, Anthropic-compatible, vLLM, llama.cpp, Ollama, Gemini). */
const CONTEXT_LENGTH =
  /context[_ ]length|context window|maximum context|too many tokens|prompt is too long|input is too long|exceeds the (model'?s )?(maximum|context)|reduce the length|token limit|n_ctx|exceed_context_size/i;

/** Provider phrasings of "no such model" (OpenAI `model_not_found`, vLLM, Ollama, llama.cpp, OpenRouter). */
const UNKNOWN_MODEL =
  /model.*(not found|does not exist|not exist|unknown|not available|is not a valid|invalid)|(unknown|invalid|no such) model|not a valid model/i;

/** OpenSSL's and Node's codes for a failed TLS handshake (certificate, host name, protocol). */
const TLS_CODE = /CERT|SELF_SIGNED|UNABLE_TO_(VERIFY|GET)|TLS|SSL|HOSTNAME/i;

/**
 * System codes that say no server answers at this address at all: retrying a request that never reached a server
 * only makes a new user wait (see the client's fail-fast on its first request).
 */
export const UNREACHABLE_CODES: ReadonlySet<string> = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_NONAME"]);

/** The first `code` along an error's cause chain (undici wraps the socket's error in "fetch failed"). */
function systemCode(error: unknown): string | undefined {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && code.length > 0) return code;
    current = current.cause;
  }
  return undefined;
}

/** The innermost message of an error's cause chain ("connect ECONNREFUSED 127.0.0.1:9", "self-signed certificate"). */
function rootMessage(error: Error): string {
  let current: Error = error;
  for (let depth = 0; current.cause instanceof Error && depth < 5; depth++) current = current.cause;
  return current.message;
}

const RETRYABLE_STATUS = (status: number) => status === 408 || status === 409 || status === 429 || status >= 500;

/** The provider's own message from an SDK error (`error.message` of the JSON body when there is one). */
function providerMessage(error: OpenAiSdk.APIError): string {
  const body = error.error as { message?: unknown; error?: { message?: unknown } } | undefined;
  const inner = typeof body?.message === "string" ? body.message : body?.error?.message;
  if (typeof inner === "string" && inner.length > 0) return inner;
  return error.message.replace(/^\d{3}\s+/, "") || `HTTP ${error.status ?? "error"}`;
}

/** Maps anything thrown during an attempt to an `LlmError` (attempt count filled in by the caller). */
export function classifyError(error: unknown, userAborted: boolean, sdk?: SdkErrors): LlmError {
  const base = { attempts: 0 };
  if (userAborted) return { ...base, kind: "aborted", message: "The request was cancelled.", retryable: false };
  if (error instanceof IdleTimeoutError || (sdk && error instanceof sdk.APIConnectionTimeoutError)) {
    return { ...base, kind: "timeout", message: error.message || "The request timed out.", retryable: true };
  }
  if (sdk && error instanceof sdk.APIUserAbortError) {
    // Only our own idle timer aborts without the caller's signal.
    return { ...base, kind: "timeout", message: "The stream stalled.", retryable: true };
  }
  if (sdk && error instanceof sdk.APIConnectionError) {
    const code = systemCode(error);
    const withCode = code === undefined ? {} : { code };
    const root = rootMessage(error);
    const message = root === error.message ? root : `${error.message}: ${root}`;
    if (code !== undefined && TLS_CODE.test(code)) {
      // A certificate does not fix itself between attempts.
      return { ...base, ...withCode, kind: "tls", message: root, retryable: false };
    }
    return { ...base, ...withCode, kind: "network", message, retryable: true };
  }
  if (sdk && error instanceof sdk.APIError) {
    const message = providerMessage(error);
    const code = typeof error.code === "string" ? error.code : undefined;
    const status = error.status;
    const withStatus = status === undefined ? {} : { status };
    const withCode = code === undefined ? {} : { code };
    if (code === "context_length_exceeded" || ((status === 400 || status === 413) && CONTEXT_LENGTH.test(message))) {
      return { ...base, ...withStatus, ...withCode, kind: "context_length_exceeded", message, retryable: false };
    }
    if (status === 401 || status === 403) {
      return { ...base, ...withStatus, ...withCode, kind: "auth", message, retryable: false };
    }
    if (code === "model_not_found" || ((status === 404 || status === 400) && UNKNOWN_MODEL.test(message))) {
      return { ...base, ...withStatus, ...withCode, kind: "unknown_model", message, retryable: false };
    }
    const retryable = status === undefined || RETRYABLE_STATUS(status);
    return { ...base, ...withStatus, ...withCode, kind: "http", message, retryable };
  }
  if (error instanceof StreamErrorPayload) {
    const withCode = error.code === undefined ? {} : { code: error.code };
    if (error.code === "context_length_exceeded" || CONTEXT_LENGTH.test(error.message)) {
      return { ...base, ...withCode, kind: "context_length_exceeded", message: error.message, retryable: false };
    }
    return { ...base, ...withCode, kind: "http", message: error.message, retryable: true };
  }
  if (error instanceof InvalidResponseError) {
    return { ...base, kind: "invalid_response", message: error.message, retryable: false };
  }
  if (error instanceof IncompleteStreamError) {
    return { ...base, kind: "network", message: error.message, retryable: true };
  }
  // fetch body errors ("terminated", ECONNRESET, "other side closed") while reading the stream.
  const message = error instanceof Error ? describeCause(error) : String(error);
  return { ...base, kind: "network", message, retryable: true };
}

function describeCause(error: Error): string {
  const cause = error.cause instanceof Error ? ` (${error.cause.message})` : "";
  return `${error.message}${cause}`;
}

/** The wait a provider asked for, from `retry-after-ms` or `retry-after` (seconds or an HTTP date). */
export function retryAfterMs(error: unknown, sdk?: SdkErrors): number | undefined {
  if (!sdk || !(error instanceof sdk.APIError) || !error.headers) return undefined;
  const ms = Number.parseFloat(error.headers.get("retry-after-ms") ?? "");
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const header = error.headers.get("retry-after");
  if (!header) return undefined;
  const seconds = Number.parseFloat(header);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(header);
  return Number.isFinite(date) ? Math.max(0, date - Date.now()) : undefined;
}

/** Resolved retry policy. */
export interface Backoff {
  maxRetries: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export function resolveBackoff(policy: RetryPolicy | undefined): Backoff {
  return {
    maxRetries: policy?.maxRetries ?? 4,
    baseDelayMs: policy?.baseDelayMs ?? 500,
    maxDelayMs: policy?.maxDelayMs ?? 30_000,
  };
}

/** Delay before retry number `retry` (1-based): Retry-After when given, else exponential with full jitter. */
export function backoffDelay(backoff: Backoff, retry: number, retryAfter: number | undefined): number {
  if (retryAfter !== undefined) return Math.min(retryAfter, backoff.maxDelayMs);
  const ceiling = Math.min(backoff.maxDelayMs, backoff.baseDelayMs * 2 ** (retry - 1));
  // Half fixed, half random: spreads clients out without ever retrying instantly.
  return Math.round(ceiling / 2 + (Math.random() * ceiling) / 2);
}
