import type { IncomingMessage } from "node:http";
import { errorText } from "../error-text.js";
import { clientSecrets, redactSecrets } from "../redact.js";
import { ChunkAccumulator } from "./accumulator.js";
import { encodeBody, requestParams } from "./body.js";
import {
  backoffDelay,
  classifyError,
  IdleTimeoutError,
  IncompleteStreamError,
  InvalidResponseError,
  resolveBackoff,
  retryAfterMs,
  type SdkErrors,
  UNREACHABLE_CODES,
} from "./errors.js";
import { type ChatEndpoint, chatEndpoint, postChat, readText } from "./http.js";
import { readSseData } from "./sse.js";
import type {
  LlmCallOptions,
  LlmClient,
  LlmClientOptions,
  LlmError,
  LlmRequest,
  LlmResult,
  LlmStreamEvent,
} from "./types.js";

type OpenAiSdk = typeof import("openai");
let sdkLoading: Promise<OpenAiSdk> | undefined;
let sdkLoaded: SdkErrors | undefined;

/** The `openai` package, for its error types: loaded when a request first fails (see http.ts). */
function loadSdk(): Promise<OpenAiSdk> {
  sdkLoading ??= import("openai").then((sdk) => {
    sdkLoaded = sdk;
    return sdk;
  });
  sdkLoading.catch(() => {
    sdkLoading = undefined;
  });
  return sdkLoading;
}

/** How long a response may go on after `data: [DONE]` before it is cut off (servers end it right away). */
const DRAIN_AFTER_DONE_MS = 2_000;

/**
 * Creates an OpenAI-compatible streaming client. The request goes out on node:http (http.ts) with the `openai`
 * package's error types for failed ones; the SSE body is parsed here so that malformed chunks are skipped instead of
 * failing the request, and retries are done here so a stream that dies midway is retried too.
 *
 * Contract: `stream` never throws; see `LlmClient` and the retry contract on `LlmStreamEvent`.
 */
export function createLlmClient(options: LlmClientOptions): LlmClient {
  const backoff = resolveBackoff(options.retry);
  /**
   * Whether any server ever answered at this base URL. Until one has, "connection refused" or an unknown host means
   * nothing listens there (a wrong URL, a server not started): the request fails at once instead of retrying for
   * seconds. Once a server has answered, the same error is a restart or a blip and is retried.
   */
  let reached = false;
  const target: AttemptTarget = {
    endpoint: chatEndpoint(options),
    idleTimeoutMs: options.idleTimeoutMs ?? 300_000,
    onAnswer: () => {
      reached = true;
    },
  };
  /** The key and credential headers: a provider that echoes them in an error body must not have them shown. */
  const secrets = clientSecrets(options.apiKey, options.headers);

  /** The error an attempt's `failure` stands for, its secrets redacted; not retryable when nothing listens. */
  function failed(failure: unknown, aborted: boolean, attempts: number): LlmError {
    const classified = classifyError(failure, aborted, sdkLoaded);
    const error = { ...classified, message: redactSecrets(classified.message, secrets), attempts };
    // An HTTP error status is an answer too: a server is there.
    if (error.status !== undefined) reached = true;
    if (!reached && error.kind === "network" && error.code !== undefined && UNREACHABLE_CODES.has(error.code)) {
      error.retryable = false;
    }
    return error;
  }

  /** The retry loop: attempts until one completes, the error is not retryable, the retries run out or `signal` aborts. */
  async function stream(request: LlmRequest, callOptions: LlmCallOptions = {}): Promise<LlmResult> {
    const { signal } = callOptions;
    const emit = guardedEmitter(callOptions.onEvent);
    const body = encodeBody(requestParams(request), request, options.sendReasoning ?? true);
    for (let attempts = 1; ; attempts++) {
      const acc = new ChunkAccumulator(emit);
      let failure: unknown;
      try {
        await attempt(target, body, acc, signal);
      } catch (error) {
        failure = error;
      }
      // A connection lost after the finish reason (while waiting for usage or [DONE]) still completed the answer.
      if (failure === undefined || (acc.finishReason !== undefined && !signal?.aborted))
        return completed(acc, attempts);
      const error = failed(failure, signal?.aborted ?? false, attempts);
      const partial = { content: acc.content, reasoning: acc.reasoning };
      if (!error.retryable || attempts > backoff.maxRetries) {
        return acc.usage ? { ok: false, error, partial, usage: acc.usage } : { ok: false, error, partial };
      }
      const delayMs = backoffDelay(backoff, attempts, retryAfterMs(failure, sdkLoaded));
      emit({ type: "retry", attempt: attempts, delayMs, error });
      if (!(await sleep(delayMs, signal))) {
        const aborted = { ...classifyError(undefined, true), attempts };
        return { ok: false, error: aborted, partial: { content: "", reasoning: "" } };
      }
    }
  }

  return {
    async stream(request, callOptions) {
      try {
        return await stream(request, callOptions);
      } catch (error) {
        // Defensive: the contract is "never throws", even on a bug in this file.
        const message = redactSecrets(errorText(error), secrets);
        return {
          ok: false,
          error: { kind: "invalid_response", message, retryable: false, attempts: 1 },
          partial: { content: "", reasoning: "" },
        };
      }
    },
  };
}

/** `onEvent`, made safe to call: a consumer's bug must not break the request. */
function guardedEmitter(onEvent: LlmCallOptions["onEvent"]): (event: LlmStreamEvent) => void {
  return (event) => {
    try {
      onEvent?.(event);
    } catch {
      // A consumer's bug must not break the request.
    }
  };
}

/** The success result of an attempt whose answer `acc` holds complete. */
function completed(acc: ChunkAccumulator, attempts: number): LlmResult {
  const toolCalls = acc.toolCalls();
  const success: LlmResult = {
    ok: true,
    message: acc.message(toolCalls),
    toolCalls,
    finishReason: acc.finish(),
    attempts,
  };
  if (acc.usage) success.usage = acc.usage;
  return success;
}

/** Where one attempt goes and how long it may be silent. */
interface AttemptTarget {
  endpoint: ChatEndpoint;
  idleTimeoutMs: number;
  /** Called when a server answered the request (any 2xx response). */
  onAnswer(): void;
}

/**
 * One attempt: sends the request and feeds the answer into `acc`. Throws on any failure: `IdleTimeoutError` when
 * nothing came for `target.idleTimeoutMs` (and `signal` did not abort), `InvalidResponseError` for a non-streamed body
 * that is not a completion, `IncompleteStreamError` when the stream ended before the answer was complete.
 */
async function attempt(target: AttemptTarget, body: Buffer, acc: ChunkAccumulator, signal?: AbortSignal) {
  const controller = new AbortController();
  const onAbort = () => controller.abort();
  signal?.addEventListener("abort", onAbort, { once: true });
  const idle = new IdleTimer(target.idleTimeoutMs, controller);
  try {
    if (signal?.aborted) throw new Error("aborted");
    const response = await postChat(target.endpoint, body, controller.signal, loadSdk);
    target.onAnswer();
    idle.arm();
    if (!String(response.headers["content-type"] ?? "").includes("text/event-stream")) {
      // A server that ignored `stream: true` and sent one JSON completion.
      acc.push(nonStreamingAsChunk(await readText(response)));
      if (acc.finishReason === undefined)
        throw new InvalidResponseError("The provider's answer is not a chat completion.");
      return;
    }
    const done = await readEvents(response, acc, controller, () => idle.arm());
    if (!done && acc.finishReason === undefined) {
      throw new IncompleteStreamError("The stream ended before the response was complete.");
    }
  } catch (error) {
    if (idle.fired && !signal?.aborted)
      throw new IdleTimeoutError(`No data from the provider for ${target.idleTimeoutMs} ms.`);
    throw error;
  } finally {
    idle.clear();
    signal?.removeEventListener("abort", onAbort);
  }
}

/** Aborts an attempt when no data came for `ms` since it was last armed; `fired` says whether it did. */
class IdleTimer {
  fired = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly ms: number,
    private readonly controller: AbortController,
  ) {}

  /** (Re)starts the wait: called when the response starts and on every event. */
  arm(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.fired = true;
      this.controller.abort();
    }, this.ms);
  }

  clear(): void {
    clearTimeout(this.timer);
  }
}

/**
 * Feeds the SSE events of `response` into `acc`, calling `onData` on each, until the body ends or `data: [DONE]`
 * comes (what follows it is drained in the background). Resolves to whether `[DONE]` came; on a read error the
 * event reader is closed and the error thrown.
 */
async function readEvents(
  response: IncomingMessage,
  acc: ChunkAccumulator,
  controller: AbortController,
  onData: () => void,
): Promise<boolean> {
  const events = readSseData(response)[Symbol.asyncIterator]();
  try {
    for (;;) {
      const next = await events.next();
      if (next.done) return false;
      onData();
      if (next.value.trim() === "[DONE]") {
        drainInBackground(events, controller);
        return true;
      }
      acc.push(next.value);
    }
  } catch (error) {
    void events.return?.(undefined).catch(() => {});
    throw error;
  }
}

/** Turns a non-streaming completion body into one equivalent chunk. */
function nonStreamingAsChunk(text: string): string {
  try {
    const completion = JSON.parse(text) as {
      choices?: Array<{ message?: Record<string, unknown> & { tool_calls?: unknown[] }; finish_reason?: string }>;
      usage?: unknown;
    };
    const choice = completion.choices?.[0];
    const message = choice?.message ?? {};
    const toolCalls = (message.tool_calls ?? []).map((call, index) => ({ ...(call as object), index }));
    const delta = { ...message, tool_calls: toolCalls };
    return JSON.stringify({
      choices: [{ index: 0, delta, finish_reason: choice?.finish_reason ?? "stop" }],
      usage: completion.usage,
    });
  } catch {
    return text;
  }
}

/**
 * Reads what follows `data: [DONE]` to the end of the body, without holding up the answer. Cancelling the body
 * instead would close the socket, and the next request would pay a new TCP (and TLS) handshake. A server that does
 * not end the response soon is cut off.
 */
function drainInBackground(events: AsyncIterator<string>, controller: AbortController): void {
  const timer = setTimeout(() => controller.abort(), DRAIN_AFTER_DONE_MS);
  timer.unref();
  void (async () => {
    try {
      while (!(await events.next()).done) {
        // nothing follows [DONE] in a well-formed stream
      }
    } catch {
      // cut off or broken after the answer was complete: nothing to report
    } finally {
      clearTimeout(timer);
    }
  })();
}

/** Waits `ms`; resolves false early when `signal` aborts. */
function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
