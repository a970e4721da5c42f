/**
 * A head start for the first MCP session of a fresh crow-mcp. Node compiles a function when it first runs, so the
 * first session's initialize, tools/list and first tool call cost several times what later ones do. Once the socket
 * listens and the tools are loaded, crow-mcp opens one session on its own socket, asks what every session asks first
 * and ends it: the real sessions then find the whole path compiled, from the line framing to the tool handler. The
 * messages are written as raw lines on node:net (the MCP SDK's client would cost a fresh process more than the
 * messages themselves). Nothing touches the disk (the tool call is refused on its relative path). Last, it loads the
 * PTY addon that every session's first terminal call needs.
 */
import { connect } from "node:net";
import { nodePty } from "./terminal/pty.js";

/** Sends `messages` in order on a connection of its own, each after the answer to the request before it. */
function converse(socketPath: string, messages: readonly object[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect(socketPath);
    let next = 0;
    let buffer = "";
    const sendUpToRequest = () => {
      while (next < messages.length) {
        const message = messages[next++] ?? {};
        socket.write(`${JSON.stringify(message)}\n`);
        if ("id" in message) return;
      }
      socket.destroy();
      resolve();
    };
    socket.setEncoding("utf8");
    socket.once("connect", sendUpToRequest);
    socket.on("data", (chunk: string) => {
      buffer += chunk;
      for (let end = buffer.indexOf("\n"); end >= 0; end = buffer.indexOf("\n")) {
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + 1);
        let answer: { id?: unknown };
        try {
          answer = JSON.parse(line) as { id?: unknown };
        } catch (error) {
          socket.destroy();
          return reject(error);
        }
        if (answer.id !== undefined) sendUpToRequest();
      }
    });
    socket.once("error", reject);
    socket.once("close", () => resolve());
  });
}

/**
 * Opens a session on `socketPath`, lists the tools, makes one `read` call, ends the session and loads the PTY addon.
 * Never throws.
 */
export async function warmUp(socketPath: string): Promise<void> {
  const clientInfo = { name: "crow-mcp warm-up", version: "0" };
  try {
    await converse(socketPath, [
      {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo },
      },
      { jsonrpc: "2.0", method: "notifications/initialized" },
      { jsonrpc: "2.0", id: 2, method: "tools/list" },
      { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "read", arguments: { file_path: "warm-up" } } },
    ]);
    // The PTY addon, which a session's first terminal call would otherwise load (its shell is its own).
    nodePty();
  } catch {
    // Only a head start: the real sessions work the same without it.
  }
}
