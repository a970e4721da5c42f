import type { ServerResponse } from "node:http";

/**
 * Sends a JSON-RPC error (no id) with an HTTP status: the answer of the HTTP front (`crow-mcp --http`) to a request
 * that reaches no session. `code` is the JSON-RPC error code (-32000, a server error, unless said otherwise).
 */
export function jsonRpcError(res: ServerResponse, status: number, message: string, code = -32000): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }));
}
