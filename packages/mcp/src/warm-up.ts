/**
 * A head start for the first MCP session of a fresh crow-mcp. Node compiles a function when it first runs and zod
 * compiles each schema's parser on its first parse, so the first session's initialize, tools/list and first tool
 * call cost several times what later ones do. Once the socket listens and the tools are loaded, one throwaway server
 * instance answers, inside the process, what every session asks first; the real sessions then find that code ready.
 * Nothing leaves the process and nothing touches the disk (the tool call is refused on its relative path).
 */
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { createServer, type ServerOptions } from "./server.js";

/** Hands messages to the server and collects its answers by request id, without any I/O. */
class LoopbackTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private readonly waiting = new Map<number, () => void>();

  async start(): Promise<void> {}

  async send(message: JSONRPCMessage): Promise<void> {
    if ("id" in message && typeof message.id === "number" && !("method" in message)) {
      this.waiting.get(message.id)?.();
      this.waiting.delete(message.id);
    }
  }

  async close(): Promise<void> {
    for (const done of this.waiting.values()) done();
    this.waiting.clear();
    this.onclose?.();
  }

  /** Sends a request and resolves once it is answered, after a turn of the event loop (a real request may go first). */
  async ask(id: number, method: string, params: Record<string, unknown>): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    await new Promise<void>((resolve) => {
      this.waiting.set(id, resolve);
      this.onmessage?.({ jsonrpc: "2.0", id, method, params });
    });
  }

  notify(method: string): void {
    this.onmessage?.({ jsonrpc: "2.0", method });
  }
}

/** Runs initialize, tools/list and one `read` call on a server instance of its own, then closes it. Never throws. */
export async function warmUp(options: ServerOptions): Promise<void> {
  const crow = createServer(options);
  const loop = new LoopbackTransport();
  try {
    await crow.server.connect(loop);
    await loop.ask(1, "initialize", {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "crow-mcp warm-up", version: "0" },
    });
    loop.notify("notifications/initialized");
    await loop.ask(2, "tools/list", {});
    await loop.ask(3, "tools/call", { name: "read", arguments: { file_path: "warm-up" } });
  } catch {
    // Only a head start: the real sessions work the same without it.
  } finally {
    await crow.close();
  }
}
