import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { ToolContext } from "../context.js";
import { formatOutcome, searchOne } from "../web/search.js";
import { DEFAULT_SEARXNG_URL, SEARCH_TIMEOUT_MS } from "../web/settings.js";
import { errorResult, guarded, textResult } from "./result.js";

export const MAX_QUERIES = 10;

const DESCRIPTION = "Search the web: titles, URLs and snippets per query. Read pages with web_fetch.";

const inputSchema = z.strictObject({
  queries: z.array(z.string().min(1)).min(1).max(MAX_QUERIES).describe("Run in parallel"),
  limit: z.number().int().min(1).max(50).optional().describe("Results per query"),
});

/** Registers `web_search(queries, limit=10)`. */
export function registerWebSearchTool(server: McpServer, context: ToolContext): void {
  server.registerTool(
    "web_search",
    {
      title: "Web search",
      description: DESCRIPTION,
      inputSchema,
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    },
    guarded("web_search", async (args, extra) =>
      webSearch(
        args.queries,
        args.limit ?? 10,
        context.options.web?.searxngUrl || DEFAULT_SEARXNG_URL,
        extra.signal,
        context.options.web?.timeoutMs,
      ),
    ),
  );
}

/**
 * The web_search tool's behaviour, independent of MCP: every query at once, each block in upstream's format,
 * blocks joined by a newline in query order. The result is an error only when every query failed (and then one
 * shared cause, such as SearXNG not running, is stated once rather than per query).
 */
export async function webSearch(
  queries: string[],
  limit: number,
  baseUrl: string,
  signal?: AbortSignal,
  timeoutMs: number = SEARCH_TIMEOUT_MS,
): Promise<CallToolResult> {
  const outcomes = await Promise.all(queries.map((query) => searchOne(baseUrl, query, { timeoutMs, signal })));
  const failures = outcomes.filter((o) => !o.ok);
  if (failures.length === outcomes.length) {
    const errors = new Set(failures.map((o) => (o.ok ? "" : o.error)));
    const [only] = errors;
    if (errors.size === 1 && only !== undefined) {
      return errorResult(`Error: web_search failed for ${queries.map((q) => JSON.stringify(q)).join(", ")}.\n${only}`);
    }
    return errorResult(outcomes.map((o) => formatOutcome(o, limit)).join("\n"));
  }
  return textResult(outcomes.map((o) => formatOutcome(o, limit)).join("\n"));
}
