import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { errorText } from "../error-text.js";
import { log } from "../log.js";

/** A successful tool result carrying plain text for the model (and `_meta` for the client, e.g. a diff). */
export function textResult(
  text: string,
  structuredContent?: Record<string, unknown>,
  meta?: Record<string, unknown>,
): CallToolResult {
  return {
    content: [{ type: "text", text }],
    ...(structuredContent ? { structuredContent } : {}),
    ...(meta ? { _meta: meta } : {}),
  };
}

/**
 * A failed tool result. Tool failures are results the model can read and act on (`isError: true`), never
 * JSON-RPC errors, so one bad call does not look like a broken server.
 */
export function errorResult(text: string): CallToolResult {
  return { content: [{ type: "text", text }], isError: true };
}

/**
 * Wraps a tool handler so that an unexpected exception becomes an `isError` result naming the tool, instead of
 * an opaque protocol error. Expected failures should still be returned with {@link errorResult} by the handler.
 */
export function guarded<A, E>(
  tool: string,
  handler: (args: A, extra: E) => Promise<CallToolResult>,
): (args: A, extra: E) => Promise<CallToolResult> {
  return async (args, extra) => {
    try {
      return await handler(args, extra);
    } catch (error) {
      log.error(`${tool} failed unexpectedly`, error);
      const message = errorText(error);
      return errorResult(`Error: ${tool} failed unexpectedly: ${message}`);
    }
  };
}
