import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { ToolContext } from "../context.js";
import { takeCallPolicy } from "../sandbox/meta.js";
import type { SandboxPolicy } from "../sandbox/policy.js";
import type { AddressGuard } from "../web/address.js";
import { TtlCache } from "../web/cache.js";
import { fetchUrl, WebError } from "../web/http.js";
import { type PageContent, paginate, renderPage } from "../web/page.js";
import {
  FETCH_CACHE_CHARS,
  FETCH_CACHE_ENTRIES,
  FETCH_CACHE_TTL_MS,
  FETCH_MAX_BYTES,
  FETCH_MAX_REDIRECTS,
  FETCH_TIMEOUT_MS,
} from "../web/settings.js";
import { errorResult, guarded, textResult } from "./result.js";

export const DEFAULT_MAX_LENGTH = 5000;

// Lean: paging is explained by the result that is cut (it names the next start_index); refused addresses say why.
const DESCRIPTION =
  "Fetch a URL: HTML as Markdown of its main content, other types as they are. Long content is paged (start_index).";

const inputSchema = z.strictObject({
  url: z.string(),
  max_length: z.number().int().min(1).max(1_000_000).optional().describe("Characters to return"),
  start_index: z.number().int().min(0).optional(),
  raw: z.boolean().optional().describe("HTML source instead of Markdown"),
});

/** Registers `web_fetch(url, max_length=5000, start_index=0, raw=false)` with a per-connection page cache. */
export function registerWebFetchTool(server: McpServer, context: ToolContext): void {
  const cache = new TtlCache<PageContent>(FETCH_CACHE_TTL_MS, FETCH_CACHE_ENTRIES, FETCH_CACHE_CHARS, pageSize);
  context.onClose(() => cache.clear());
  server.registerTool(
    "web_fetch",
    {
      title: "Fetch web page",
      description: DESCRIPTION,
      inputSchema,
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
    },
    guarded("web_fetch", async (args, extra) => {
      const badPolicy = takeCallPolicy(context, extra._meta);
      if (badPolicy) return errorResult(badPolicy);
      const guard = addressGuard(context.sandbox.current);
      const { max_length = DEFAULT_MAX_LENGTH, start_index = 0, raw = false } = args;
      const timeoutMs = context.options.web?.timeoutMs ?? FETCH_TIMEOUT_MS;
      return webFetch(args.url, max_length, start_index, raw, cache, extra.signal, guard, timeoutMs);
    }),
  );
}

/**
 * The addresses web_fetch may reach under a session's policy: with the sandbox on and its network off, public
 * addresses only (the shell reaches none, and web_fetch must not be its way to the host's loopback services or the
 * local network); otherwise everything but link-local and cloud-metadata addresses.
 */
export function addressGuard(policy: SandboxPolicy): AddressGuard {
  return policy.mode !== "off" && !policy.network ? "private" : "metadata";
}

function pageSize(page: PageContent): number {
  return page.kind === "text" ? page.text.length : page.data.length;
}

/** The web_fetch tool's behaviour, independent of MCP. */
export async function webFetch(
  url: string,
  maxLength: number,
  startIndex: number,
  raw: boolean,
  cache: TtlCache<PageContent>,
  signal?: AbortSignal,
  guard: AddressGuard = "metadata",
  timeoutMs: number = FETCH_TIMEOUT_MS,
): Promise<CallToolResult> {
  // The guard is part of the key: a page fetched while the network was on is not served once it is off.
  const key = `${raw ? "raw" : "md"} ${guard} ${url}`;
  let page = cache.get(key);
  if (!page) {
    try {
      const response = await fetchUrl(url, {
        timeoutMs,
        maxBytes: FETCH_MAX_BYTES,
        maxRedirects: FETCH_MAX_REDIRECTS,
        signal,
        guard,
      });
      if (response.status >= 400) {
        return errorResult(
          `Error fetching ${url}: HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ""}${statusHint(response.status)}`,
        );
      }
      page = await renderPage(url, response, raw);
    } catch (error) {
      if (error instanceof WebError) return errorResult(`Error fetching ${url}: ${error.message}`);
      throw error;
    }
    cache.set(key, page);
  }
  if (page.kind === "image") {
    return {
      content: [
        { type: "text", text: page.header },
        { type: "image", data: page.data, mimeType: page.mimeType },
      ],
    };
  }
  return textResult(paginate(page.header, page.text, startIndex, maxLength));
}

function statusHint(status: number): string {
  if (status === 404 || status === 410)
    return " (the page does not exist; check the URL or search for its new location)";
  if (status === 401 || status === 403) return " (the site refuses access without login or blocks automated clients)";
  if (status === 429) return " (rate limited; wait before retrying)";
  if (status >= 500) return " (the server failed; it may work if retried later)";
  return "";
}
