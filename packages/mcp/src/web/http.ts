import { checkFetchTarget } from "./address.js";

/** Limits of one {@link fetchUrl} call. */
export interface FetchLimits {
  /** Whole-request deadline (all redirect hops and the body), in milliseconds. */
  timeoutMs: number;
  /** Largest body accepted, in bytes (after decompression). */
  maxBytes: number;
  /** Redirects followed before giving up. */
  maxRedirects: number;
  /** Cancellation from the caller (the MCP request). */
  signal?: AbortSignal;
}

/** A downloaded response (any status; the caller decides what a 404 means). */
export interface FetchedResponse {
  /** The URL that answered, after redirects. */
  url: string;
  status: number;
  statusText: string;
  contentType: string | undefined;
  body: Uint8Array;
}

/** A failure with a message meant for the model (it is shown as is). */
export class WebError extends Error {}

export const USER_AGENT = "Mozilla/5.0 (compatible; CrowAgent/1.0; +https://github.com/crow-agent)";
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/**
 * GETs `url` with the limits applied: redirects are followed by hand (`redirect: "manual"`) so that every hop's
 * address is checked by {@link checkFetchTarget} before it is contacted, the body is read as a stream and abandoned
 * as soon as it passes `maxBytes`, and one deadline covers everything. Failures are {@link WebError}s.
 */
export async function fetchUrl(url: string, limits: FetchLimits): Promise<FetchedResponse> {
  let current: URL;
  try {
    current = new URL(url);
  } catch {
    throw new WebError(`Invalid URL: ${url} (expected an absolute http:// or https:// URL)`);
  }
  const signal = combine(AbortSignal.timeout(limits.timeoutMs), limits.signal);
  for (let hop = 0; ; hop++) {
    const check = await checkFetchTarget(current);
    if (!check.ok) throw new WebError(`Refused to fetch ${current.href}: ${check.reason}.`);
    let response: Response;
    try {
      response = await fetch(current, {
        redirect: "manual",
        signal,
        headers: {
          "User-Agent": USER_AGENT,
          Accept: "text/html,application/xhtml+xml,application/xml;q=0.9,text/plain;q=0.8,*/*;q=0.7",
          "Accept-Language": "en-US,en;q=0.9",
        },
      });
    } catch (error) {
      throw new WebError(describeFailure(error, limits, signal));
    }
    const location = response.headers.get("location");
    if (REDIRECT_STATUSES.has(response.status) && location) {
      await response.body?.cancel().catch(() => {});
      if (hop >= limits.maxRedirects) {
        throw new WebError(
          `Too many redirects (more than ${limits.maxRedirects}); the last one pointed to ${location}`,
        );
      }
      try {
        current = new URL(location, current);
      } catch {
        throw new WebError(`The server redirected to an invalid URL: ${location}`);
      }
      continue;
    }
    const body = await readCapped(response, limits, signal);
    return {
      url: current.href,
      status: response.status,
      statusText: response.statusText,
      contentType: response.headers.get("content-type") ?? undefined,
      body,
    };
  }
}

async function readCapped(response: Response, limits: FetchLimits, signal: AbortSignal): Promise<Uint8Array> {
  const tooLarge = (size: string) =>
    new WebError(
      `The response is too large (${size}; web_fetch reads at most ${formatBytes(limits.maxBytes)}). Download it with the terminal instead, e.g. curl -sL -o /tmp/page '${response.url}'.`,
    );
  const declared = Number(response.headers.get("content-length") ?? Number.NaN);
  if (Number.isFinite(declared) && declared > limits.maxBytes) {
    await response.body?.cancel().catch(() => {});
    throw tooLarge(formatBytes(declared));
  }
  if (!response.body) return new Uint8Array(0);
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > limits.maxBytes) {
        await reader.cancel().catch(() => {});
        throw tooLarge(`more than ${formatBytes(limits.maxBytes)}`);
      }
      chunks.push(value);
    }
  } catch (error) {
    if (error instanceof WebError) throw error;
    throw new WebError(describeFailure(error, limits, signal));
  }
  return Buffer.concat(chunks, total);
}

/** `AbortSignal.any` of the defined signals. */
export function combine(...signals: Array<AbortSignal | undefined>): AbortSignal {
  const present = signals.filter((s): s is AbortSignal => s !== undefined);
  return present.length === 1 && present[0] ? present[0] : AbortSignal.any(present);
}

function describeFailure(error: unknown, limits: FetchLimits, signal: AbortSignal): string {
  if (signal.aborted) {
    return limits.signal?.aborted
      ? "The request was cancelled."
      : `Timed out after ${limits.timeoutMs / 1000} s without a complete answer.`;
  }
  return describeNetworkError(error);
}

/** The system error code (ECONNREFUSED, ENOTFOUND…) behind a fetch failure, if there is one. */
export function networkErrorCode(error: unknown): string | undefined {
  for (let current: unknown = error, depth = 0; current && depth < 5; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string") return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** A short human explanation of a network-level fetch failure (undici wraps the real cause in "fetch failed"). */
export function describeNetworkError(error: unknown): string {
  const code = networkErrorCode(error);
  switch (code) {
    case "ECONNREFUSED":
      return "Connection refused (nothing is listening at that address and port).";
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return "The host name could not be resolved (DNS lookup failed); check the URL, or there is no network access.";
    case "ECONNRESET":
    case "UND_ERR_SOCKET":
      return "The connection was closed by the server before the response was complete.";
    case "EHOSTUNREACH":
    case "ENETUNREACH":
      return "The host is unreachable from this machine (no route or no network access).";
    case "UND_ERR_HEADERS_OVERFLOW":
      return "The server sent response headers that are too large.";
    default:
      break;
  }
  if (code && /CERT|SSL|TLS|SELF_SIGNED/i.test(code)) return `TLS certificate problem (${code}).`;
  const cause = (error as { cause?: { message?: unknown } }).cause;
  const detail =
    typeof cause?.message === "string" ? cause.message : error instanceof Error ? error.message : String(error);
  if (detail === "bad port") {
    return "The port is on the Fetch standard's list of blocked ports (such as 6000 or 6667), so it cannot be fetched.";
  }
  return code ? `Network error ${code}: ${detail}` : `Network error: ${detail}`;
}

/** "1.5 MB", "900 KB", "12 bytes". */
export function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(1).replace(/\.0$/, "")} MB`;
  if (bytes >= 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${bytes} bytes`;
}
