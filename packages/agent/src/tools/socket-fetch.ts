/**
 * `fetch` over a unix socket, for the MCP SDK's Streamable HTTP client transport (its `fetch` option): Node's own
 * fetch cannot reach a socket path without the undici package. Requests go through one keep-alive agent per socket;
 * response bodies stream (the server answers tool calls as server-sent events), and an aborted signal ends the
 * request and its body.
 */
import { Agent, request } from "node:http";
import { Readable } from "node:stream";

export type SocketFetch = (url: string | URL, init?: RequestInit) => Promise<Response>;

function headerRecord(headers: RequestInit["headers"]): Record<string, string> {
  const out: Record<string, string> = {};
  new Headers(headers).forEach((value, key) => {
    out[key] = value;
  });
  return out;
}

function bodyOf(body: RequestInit["body"]): string | Uint8Array | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === "string" || body instanceof Uint8Array) return body;
  throw new TypeError("socket fetch: only string and byte bodies are supported");
}

/** A fetch whose requests all go to the HTTP server listening on `socketPath` (the URL gives path and Host). */
export function socketFetch(socketPath: string): SocketFetch {
  // Connections are pooled by socket path (the request's `socketPath` is part of the agent's pool key).
  const agent = new Agent({ keepAlive: true });
  return (input, init = {}) =>
    new Promise<Response>((resolve, reject) => {
      const url = new URL(input);
      const body = bodyOf(init.body);
      const req = request(
        {
          agent,
          socketPath,
          method: init.method ?? "GET",
          path: `${url.pathname}${url.search}`,
          headers: { host: url.host, ...headerRecord(init.headers) },
          ...(init.signal ? { signal: init.signal } : {}),
        },
        (res) => {
          const headers = new Headers();
          for (const [key, value] of Object.entries(res.headers)) {
            if (Array.isArray(value)) for (const v of value) headers.append(key, v);
            else if (value !== undefined) headers.set(key, value);
          }
          const status = res.statusCode ?? 500;
          const empty = status === 204 || status === 304 || init.method === "HEAD";
          if (empty) res.resume();
          resolve(
            new Response(empty ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>), {
              status,
              ...(res.statusMessage ? { statusText: res.statusMessage } : {}),
              headers,
            }),
          );
        },
      );
      req.on("error", reject);
      req.end(body);
    });
}
