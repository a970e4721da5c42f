import type { ServerResponse } from "node:http";

/**
 * Sends a JSON-RPC error (no id) with an HTTP status: the answer of the HTTP front (`crow-mcp --http`) to a request
 * that reaches no session.
 */
export function jsonRpcError(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }));
}
