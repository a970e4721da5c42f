/**
 * A head start for the first MCP session of a fresh crow-mcp. Node compiles a function when it first runs, so the
 * first session's initialize, tools/list and first tool call cost several times what later ones do. Once the socket
 * listens and the tools are loaded, crow-mcp opens one session on its own socket, asks what every session asks first
 * and ends it: the real sessions then find the whole path compiled, from the line framing to the tool handler. The
 * messages are written with the line framing alone (the MCP SDK's client would cost a fresh process more than the
 * messages themselves). Nothing touches the disk (the tool call is refused on its relative path). Last, it loads the
 * PTY addon that every session's first terminal call needs.
 */
import { connect } from "node:net";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { SECRET_META_KEY, SocketLineTransport } from "./line-transport.js";

/** Sends `messages` in order on a connection of its own, each after the answer to the request before it. */
function converse(socketPath: string, messages: readonly JSONRPCMessage[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect(socketPath);
    socket.once("error", reject);
    socket.once("connect", () => {
      const lines = new SocketLineTransport(socket);
      let next = 0;
      const sendUpToRequest = () => {
        for (let message = messages[next]; message; message = messages[next]) {
          next++;
          void lines.send(message);
          if ("id" in message) return;
        }
        void lines.close();
      };
      lines.onmessage = (answer) => {
        if ("id" in answer) sendUpToRequest();
      };
      lines.onclose = () => resolve();
      sendUpToRequest();
    });
  });
}

/**
 * Opens a session on `socketPath` (with the socket's `secret`, if it has one), lists the tools, makes one `read` call, ends the session and loads the PTY addon.
 * Never throws.
 */
export async function warmUp(socketPath: string, secret?: string): Promise<void> {
  const clientInfo = { name: "crow-mcp warm-up", version: "0" };
  try {
    await converse(socketPath, [
      {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2025-06-18",
          capabilities: {},
          clientInfo,
          ...(secret !== undefined ? { _meta: { [SECRET_META_KEY]: secret } } : {}),
        },
      },
      { jsonrpc: "2.0", method: "notifications/initialized" },
      { jsonrpc: "2.0", id: 2, method: "tools/list" },
      { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "read", arguments: { file_path: "warm-up" } } },
    ]);
    // The PTY addon, which a session's first terminal call would otherwise load (its shell is its own).
    await import("@lydell/node-pty");
  } catch {
    // Only a head start: the real sessions work the same without it.
  }
}
