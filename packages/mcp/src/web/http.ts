import type { Readable } from "node:stream";
import { startDeadline } from "@crow/util";
import { errorText } from "../error-text.js";
import {
  type AddressGuard,
  BlockedAddressError,
  checkFetchTarget,
  guardedLookup,
  type Resolve,
  systemResolve,
} from "./address.js";
import { openGet } from "./request.js";

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
  /** Host-name resolution (default: the system's). Tests give one that answers differently each time. */
  resolve?: Resolve;
  /**
   * Which addresses are refused (default `"metadata"`: link-local and cloud metadata); `"private"` (a session whose
   * network is off) refuses loopback and private addresses too. Applied to every hop, on the address connected to.
   */
  guard?: AddressGuard;
  /**
   * Called when the final response's headers are in, before its body is read: a returned message refuses the
   * response (the fetch then fails with a {@link ResponseRefused} carrying that message, the body unread).
   */
  accept?: (response: {
    url: string;
    status: number;
    contentType: string | undefined;
    length: number;
  }) => string | undefined;
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

/** A response that the caller's `accept` refused; the message is the one `accept` returned. */
export class ResponseRefused extends WebError {}

export const USER_AGENT = "Mozilla/5.0 (compatible; CrowAgent/1.0; +https://github.com/crow-agent)";
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/**
 * GETs `url` with the limits applied: redirects are followed by hand so that every hop is checked before it is
 * contacted ({@link checkFetchTarget} for the URL, {@link guardedLookup} for the addresses its socket connects to),
 * the body is read as a stream and abandoned as soon as it passes `maxBytes`, and one deadline covers everything
 * (a timer, which a garbage collection cannot cancel). Failures are {@link WebError}s.
 */
export async function fetchUrl(url: string, limits: FetchLimits): Promise<FetchedResponse> {
  let current: URL;
  try {
    current = new URL(url);
  } catch {
    throw new WebError(`Invalid URL: ${url} (expected an absolute http:// or https:// URL)`);
  }
  const deadline = startDeadline(limits.timeoutMs, limits.signal);
  const failure = (error: unknown) => {
    if (error instanceof WebError) return error;
    if (deadline.timedOut())
      return new WebError(`Timed out after ${limits.timeoutMs / 1000} s without a complete answer.`);
    if (deadline.signal.aborted) return new WebError("The request was cancelled.");
    if (error instanceof BlockedAddressError)
      return new WebError(`Refused to fetch ${current.href}: ${error.message}.`);
    return new WebError(describeNetworkError(error));
  };
  const guard = limits.guard ?? "metadata";
  const lookup = guardedLookup(limits.resolve ?? systemResolve, guard);
  try {
    for (let hop = 0; ; hop++) {
      const check = checkFetchTarget(current, guard);
      if (!check.ok) throw new WebError(`Refused to fetch ${current.href}: ${check.reason}.`);
      const response = await openGet(current, {
        lookup,
        signal: deadline.signal,
        headers: {
          "User-Agent": USER_AGENT,
          Accept: "text/html,application/xhtml+xml,application/xml;q=0.9,text/plain;q=0.8,*/*;q=0.7",
          "Accept-Language": "en-US,en;q=0.9",
        },
      });
      const location = header(response.headers.location);
      if (REDIRECT_STATUSES.has(response.status) && location) {
        response.body.destroy();
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
      const contentType = header(response.headers["content-type"]);
      const declared = Number(header(response.headers["content-length"]) ?? Number.NaN);
      const refusal = limits.accept?.({ url: current.href, status: response.status, contentType, length: declared });
      if (refusal !== undefined) {
        response.body.destroy();
        throw new ResponseRefused(refusal);
      }
      const body = await readCapped(response.body, current.href, declared, limits, deadline.signal);
      return { url: current.href, status: response.status, statusText: response.statusText, contentType, body };
    }
  } catch (error) {
    throw failure(error);
  } finally {
    deadline.clear();
  }
}

function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

async function readCapped(
  body: Readable,
  url: string,
  declared: number,
  limits: FetchLimits,
  signal: AbortSignal,
): Promise<Uint8Array> {
  const tooLarge = (size: string) =>
    new WebError(
      `The response is too large (${size}; web_fetch reads at most ${formatBytes(limits.maxBytes)}). Download it with the terminal instead, e.g. curl -sL -o /tmp/page '${url}'.`,
    );
  if (Number.isFinite(declared) && declared > limits.maxBytes) {
    body.destroy();
    throw tooLarge(formatBytes(declared));
  }
  // The request's own signal ends the socket, but a decompressing body must be ended too.
  const stop = () => body.destroy(signal.reason instanceof Error ? signal.reason : new Error("aborted"));
  if (signal.aborted) stop();
  signal.addEventListener("abort", stop, { once: true });
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      total += chunk.byteLength;
      if (total > limits.maxBytes) throw tooLarge(`more than ${formatBytes(limits.maxBytes)}`);
      chunks.push(chunk);
    }
  } finally {
    signal.removeEventListener("abort", stop);
    body.destroy();
  }
  return Buffer.concat(chunks, total);
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
  const detail = typeof cause?.message === "string" ? cause.message : errorText(error);
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
