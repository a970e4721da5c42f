/**
 * The chat-completions POST on node:http / node:https, with the body already encoded (body.ts). Through the `openai`
 * package and `fetch`, every request also built the SDK's request objects and undici's fetch, web streams and
 * resource-timing entries, and the first one loaded undici and the SDK (~0.2 MB of code each) and compiled fetch's
 * WebAssembly HTTP parser: in a fresh process that was a good part of the CPU of the first tool rounds and of
 * `crow run`'s time to its first request. The SDK stays the source of the error types (loaded when a request fails),
 * so failures are classified as before (errors.ts).
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import { errorText } from "../error-text.js";
import type { SdkErrors } from "./errors.js";

/** Where and how one client sends its requests (one keep-alive agent per client: the connection is reused). */
export interface ChatEndpoint {
  url: URL;
  headers: Record<string, string>;
  agent: HttpAgent;
  /** Time to wait for the response headers, ms. */
  timeoutMs: number;
}

export function chatEndpoint(options: {
  baseURL: string;
  apiKey?: string;
  headers?: Record<string, string>;
  connectTimeoutMs?: number;
}): ChatEndpoint {
  // As the SDK joins them: `${baseURL}/chat/completions`, one slash between.
  const base = options.baseURL.endsWith("/") ? options.baseURL.slice(0, -1) : options.baseURL;
  const url = new URL(`${base}/chat/completions`);
  const headers: Record<string, string> = {
    accept: "application/json",
    "content-type": "application/json",
    authorization: `Bearer ${options.apiKey || "not-needed"}`,
  };
  // Extra headers win, case-insensitively (an `Authorization` of the config replaces the bearer token).
  for (const [name, value] of Object.entries(options.headers ?? {})) headers[name.toLowerCase()] = value;
  const agent = url.protocol === "https:" ? new HttpsAgent({ keepAlive: true }) : new HttpAgent({ keepAlive: true });
  return { url, headers, agent, timeoutMs: options.connectTimeoutMs ?? 120_000 };
}

/** The response's body as text. */
export async function readText(res: IncomingMessage): Promise<string> {
  let text = "";
  res.setEncoding("utf8");
  for await (const chunk of res as AsyncIterable<string>) text += chunk;
  return text;
}

/**
 * Sends `body` and resolves with the response once its headers are in and its status is 2xx. Rejects with the SDK's
 * error for that status (with the provider's JSON error body), with `APIConnectionError` (the system error as its
 * cause) when no answer came, `APIConnectionTimeoutError` after `timeoutMs` without headers, or the abort error when
 * `signal` aborted.
 */
export function postChat(
  endpoint: ChatEndpoint,
  body: Buffer,
  signal: AbortSignal,
  loadErrors: () => Promise<SdkErrors>,
): Promise<IncomingMessage> {
  const send = endpoint.url.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise<IncomingMessage>((resolve, reject) => {
    let timedOut = false;
    const req = send(
      endpoint.url,
      {
        method: "POST",
        agent: endpoint.agent,
        headers: { ...endpoint.headers, "content-length": String(body.length) },
      },
      (res) => {
        clearTimeout(timer);
        const status = res.statusCode ?? 0;
        if (status >= 200 && status < 300) {
          resolve(res);
          return;
        }
        void (async () => {
          const text = await readText(res).catch(errorText);
          let json: object | undefined;
          try {
            const parsed: unknown = JSON.parse(text);
            json = typeof parsed === "object" && parsed !== null ? parsed : undefined;
          } catch {
            json = undefined;
          }
          const headers = new Headers();
          for (const [name, value] of Object.entries(res.headers)) {
            if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(", ") : value);
          }
          const sdk = await loadErrors();
          reject(sdk.APIError.generate(status, json, json === undefined ? text : undefined, headers));
        })().catch(reject);
      },
    );
    const timer = setTimeout(() => {
      timedOut = true;
      req.destroy(new Error(`no response within ${endpoint.timeoutMs} ms`));
    }, endpoint.timeoutMs);
    // The abort, by hand rather than node:http's `signal` option, whose end-of-stream tracking cost a fresh process
    // ~0.1 ms per request. Destroying the request ends its response too (the body being read fails).
    const onAbort = () => req.destroy(new Error("The request was aborted"));
    if (signal.aborted) onAbort();
    else {
      signal.addEventListener("abort", onAbort, { once: true });
      req.once("close", () => signal.removeEventListener("abort", onAbort));
    }
    req.once("error", (error: Error) => {
      clearTimeout(timer);
      if (signal.aborted) {
        reject(error);
        return;
      }
      void loadErrors()
        .then((sdk) =>
          reject(timedOut ? new sdk.APIConnectionTimeoutError() : new sdk.APIConnectionError({ cause: error })),
        )
        .catch(reject);
    });
    req.end(body);
  });
}
