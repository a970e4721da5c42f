/**
 * The client side of Crow over the network (`crow run --connect URL`): an ACP stream to a `crow acp --listen`, over
 * WebSocket (ws://, wss://) or Streamable HTTP (http://, https://), with the bearer token on every request. The SDK's
 * experimental clients speak the transport; this picks one and makes a refusal (a wrong token, a foreign Host) say
 * what the server said instead of a bare status.
 */
import type { IncomingMessage } from "node:http";
import type { Stream } from "@agentclientprotocol/sdk";

/** A URL `--connect` takes; throws an Error saying what is expected. */
export function remoteUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error(`--connect expects a URL such as ws://host:7420/acp or http://host:7420/acp, got "${text}"`);
  }
  if (!["ws:", "wss:", "http:", "https:"].includes(url.protocol)) {
    throw new Error(`--connect: ${url.protocol}// is not served: use ws://, wss://, http:// or https://`);
  }
  if (url.pathname === "/" || url.pathname === "") url.pathname = "/acp";
  return url;
}

export interface RemoteStream {
  stream: Stream;
  /** Why the server refused the connection (its status and message), once it did. */
  refusal(): string | undefined;
}

/** Opens an ACP stream to `url` with `token`. */
export async function remoteStream(url: URL, token: string): Promise<RemoteStream> {
  const headers = { Authorization: `Bearer ${token}` };
  let refused: string | undefined;
  if (url.protocol === "http:" || url.protocol === "https:") {
    const { createHttpStream } = await import("@agentclientprotocol/sdk/experimental/http-client");
    // The SDK closes the stream on 401/403; this fetch keeps what the server said about why.
    const fetchSaying: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      if (response.status === 401 || response.status === 403 || response.status === 404) {
        refused = `${response.status}: ${(await response.clone().text()).trim()}`;
      }
      return response;
    };
    return { stream: createHttpStream(url.href, { headers, fetch: fetchSaying }), refusal: () => refused };
  }
  const [{ createWebSocketStream }, { WebSocket }] = await Promise.all([
    import("@agentclientprotocol/sdk/experimental/ws-client"),
    import("ws"),
  ]);
  /** ws's client, telling a refused upgrade's status and body. */
  class SayingWebSocket extends WebSocket {
    constructor(address: string, protocols?: string | string[], options?: { headers?: Record<string, string> }) {
      super(address, protocols, options);
      this.on("unexpected-response", (request, response: IncomingMessage) => {
        let body = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => {
          body += chunk;
        });
        response.on("end", () => {
          refused = `${response.statusCode}: ${body.trim()}`;
          request.destroy();
          this.emit("error", new Error(refused));
          this.emit("close", 1006, Buffer.from(""));
        });
      });
    }
  }
  return {
    stream: createWebSocketStream(url.href, { headers, WebSocket: SayingWebSocket }),
    refusal: () => refused,
  };
}
