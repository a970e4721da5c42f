/**
 * One HTTP(S) GET over Node's own client, whose sockets resolve host names through a `lookup` the caller gives
 * (the address guard). The global fetch cannot take one: it resolves inside undici, out of reach.
 */
import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import type { LookupFunction } from "node:net";
import { pipeline, type Readable } from "node:stream";
import { createBrotliDecompress, createGunzip, createInflate } from "node:zlib";

/** An answered GET: status and headers, and the body as a stream, already decompressed. */
export interface OpenedResponse {
  status: number;
  statusText: string;
  headers: IncomingHttpHeaders;
  /** The body after Content-Encoding is undone (gzip, deflate, br); destroy it to abandon the download. */
  body: Readable;
}

/** How {@link openGet} connects. */
export interface GetOptions {
  headers: Record<string, string>;
  /** The sockets' host-name resolution (and refusal). */
  lookup: LookupFunction;
  /** Aborts the connection, the request and the body. */
  signal: AbortSignal;
}

/** Sends a GET to `url` (http or https) and resolves once the status line and headers have arrived. */
export function openGet(url: URL, options: GetOptions): Promise<OpenedResponse> {
  const send = url.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const request = send(url, {
      method: "GET",
      headers: { "Accept-Encoding": "gzip, deflate, br", ...options.headers },
      lookup: options.lookup,
      signal: options.signal,
      // A connection of its own: a pooled socket would skip the lookup (and so the address check) of this request.
      agent: false,
    });
    request.once("error", reject);
    request.once("response", (response: IncomingMessage) => {
      const body = decoded(response);
      // Abandoning the body (an abort, the size cap) must also close the connection.
      body.once("close", () => request.destroy());
      resolve({
        status: response.statusCode ?? 0,
        statusText: response.statusMessage ?? "",
        headers: response.headers,
        body,
      });
    });
    request.end();
  });
}

function decoded(response: IncomingMessage): Readable {
  const encoding = String(response.headers["content-encoding"] ?? "")
    .trim()
    .toLowerCase();
  const decoder =
    encoding === "gzip" || encoding === "x-gzip"
      ? createGunzip()
      : encoding === "deflate"
        ? createInflate()
        : encoding === "br"
          ? createBrotliDecompress()
          : undefined;
  if (!decoder) return response;
  pipeline(response, decoder, () => {});
  return decoder;
}
