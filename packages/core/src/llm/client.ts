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
import { chatEndpoint, postChat, readText } from "./http.js";
import { readSseData } from "./sse.js";
import type { LlmCallOptions, LlmClient, LlmClientOptions, LlmRequest, LlmResult, LlmStreamEvent } from "./types.js";

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
  const endpoint = chatEndpoint(options);
  const backoff = resolveBackoff(options.retry);
  /**
   * Whether any server ever answered at this base URL. Until one has, "connection refused" or an unknown host means
   * nothing listens there (a wrong URL, a server not started): the request fails at once instead of retrying for
   * seconds. Once a server has answered, the same error is a restart or a blip and is retried.
   */
  let reached = false;
  const idleTimeoutMs = options.idleTimeoutMs ?? 300_000;
  /** The key and credential headers: a provider that echoes them in an error body must not have them shown. */
  const secrets = clientSecrets(options.apiKey, options.headers);

  /** One attempt: sends the request and feeds the stream into `acc`. Throws on any failure. */
  async function attempt(body: Buffer, acc: ChunkAccumulator, signal?: AbortSignal) {
    const controller = new AbortController();
    const onAbort = () => controller.abort();
    signal?.addEventListener("abort", onAbort, { once: true });
    let idleTimer: NodeJS.Timeout | undefined;
    let idleFired = false;
    const armIdle = () => {
      clearTimeout(idleTimer);
      idleTimer = setTimeout(() => {
        idleFired = true;
        controller.abort();
      }, idleTimeoutMs);
    };
    try {
      if (signal?.aborted) throw new Error("aborted");
      const response = await postChat(endpoint, body, controller.signal, loadSdk);
      reached = true;
      armIdle();
      if (!String(response.headers["content-type"] ?? "").includes("text/event-stream")) {
        // A server that ignored `stream: true` and sent one JSON completion.
        acc.push(nonStreamingAsChunk(await readText(response)));
        if (acc.finishReason === undefined)
          throw new InvalidResponseError("The provider's answer is not a chat completion.");
        return;
      }
      let done = false;
      const events = readSseData(response)[Symbol.asyncIterator]();
      try {
        for (;;) {
          const next = await events.next();
          if (next.done) break;
          armIdle();
          if (next.value.trim() === "[DONE]") {
            done = true;
            drainInBackground(events, controller);
            break;
          }
          acc.push(next.value);
        }
      } catch (error) {
        void events.return?.(undefined).catch(() => {});
        throw error;
      }
      if (!done && acc.finishReason === undefined) {
        throw new IncompleteStreamError("The stream ended before the response was complete.");
      }
    } catch (error) {
      if (idleFired && !signal?.aborted)
        throw new IdleTimeoutError(`No data from the provider for ${idleTimeoutMs} ms.`);
      throw error;
    } finally {
      clearTimeout(idleTimer);
      signal?.removeEventListener("abort", onAbort);
    }
  }

  async function stream(request: LlmRequest, callOptions: LlmCallOptions = {}): Promise<LlmResult> {
    const { signal, onEvent } = callOptions;
    const emit = (event: LlmStreamEvent) => {
      try {
        onEvent?.(event);
      } catch {
        // A consumer's bug must not break the request.
      }
    };
    const body = encodeBody(requestParams(request), request, options.sendReasoning ?? true);
    for (let attempts = 1; ; attempts++) {
      const acc = new ChunkAccumulator(emit);
      let failure: unknown;
      try {
        await attempt(body, acc, signal);
      } catch (error) {
        failure = error;
      }
      // A connection lost after the finish reason (while waiting for usage or [DONE]) still completed the answer.
      if (failure === undefined || (acc.finishReason !== undefined && !signal?.aborted)) {
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
      const classified = classifyError(failure, signal?.aborted ?? false, sdkLoaded);
      const error = { ...classified, message: redactSecrets(classified.message, secrets), attempts };
      // An HTTP error status is an answer too: a server is there.
      if (error.status !== undefined) reached = true;
      if (!reached && error.kind === "network" && error.code !== undefined && UNREACHABLE_CODES.has(error.code)) {
        error.retryable = false;
      }
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
