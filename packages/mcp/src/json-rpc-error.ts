import type { ServerResponse } from "node:http";

/**
 * Sends a JSON-RPC error (no id) with an HTTP status. A module of its own, on node:http alone, so the unix-socket
 * front can answer bad requests before the MCP SDK and the tools are loaded.
 */
export function jsonRpcError(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }));
}
