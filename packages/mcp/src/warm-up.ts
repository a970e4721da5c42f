/**
 * A head start for the first MCP session of a fresh crow-mcp. Node compiles a function when it first runs and zod
 * compiles each schema's parser on its first parse, so the first session's initialize, tools/list and first tool
 * call cost several times what later ones do. Once the socket listens and the tools are loaded, crow-mcp opens one
 * session on its own socket, asks what every session asks first and ends it: the real sessions then find the whole
 * path compiled, from node:http's parser to the tool handler. The requests are written as raw HTTP on node:net (one
 * connection each, closed by the server after its answer): node:http's client would cost a fresh process more than
 * the requests themselves. Nothing touches the disk (the tool call is refused on its relative path). Last, it loads
 * the PTY addon that every session's first terminal call needs.
 */
import { connect } from "node:net";
import { nodePty } from "./terminal/pty.js";

/** Sends one request on a connection of its own; resolves with the raw response once the server closed it. */
function rawRequest(socketPath: string, method: string, body: unknown, sessionId?: string): Promise<string> {
  const json = body === undefined ? "" : JSON.stringify(body);
  const head = [
    `${method} /mcp HTTP/1.1`,
    "host: localhost",
    "connection: close",
    "accept: application/json, text/event-stream",
    "content-type: application/json",
    `content-length: ${Buffer.byteLength(json)}`,
    ...(sessionId ? [`mcp-session-id: ${sessionId}`, "mcp-protocol-version: 2025-06-18"] : []),
  ];
  return new Promise((resolve, reject) => {
    let text = "";
    const socket = connect(socketPath, () => socket.end(`${head.join("\r\n")}\r\n\r\n${json}`));
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      text += chunk;
    });
    socket.on("error", reject);
    socket.on("close", () => resolve(text));
  });
}

/**
 * Opens a session on `socketPath`, lists the tools, makes one `read` call, ends the session and loads the PTY addon.
 * Never throws.
 */
export async function warmUp(socketPath: string): Promise<void> {
  try {
    const init = await rawRequest(socketPath, "POST", {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "crow-mcp warm-up", version: "0" },
      },
    });
    const sessionId = /^mcp-session-id: *(\S+)/im.exec(init)?.[1];
    if (!sessionId) return;
    await rawRequest(socketPath, "POST", { jsonrpc: "2.0", method: "notifications/initialized" }, sessionId);
    await rawRequest(socketPath, "POST", { jsonrpc: "2.0", id: 2, method: "tools/list" }, sessionId);
    await rawRequest(
      socketPath,
      "POST",
      { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "read", arguments: { file_path: "warm-up" } } },
      sessionId,
    );
    await rawRequest(socketPath, "DELETE", undefined, sessionId);
    // The PTY addon, which a session's first terminal call would otherwise load (its shell is its own).
    nodePty();
  } catch {
    // Only a head start: the real sessions work the same without it.
  }
}
