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
  webTimeoutMs,
} from "../web/settings.js";
import { errorResult, guarded, textResult } from "./result.js";

export const DEFAULT_MAX_LENGTH = 5000;

const DESCRIPTION = `Fetch a URL and return its content as readable Markdown.

- HTML pages are reduced to the main article (navigation, ads and footers removed) and converted to Markdown with headings, lists, tables, code blocks and absolute links.
- Long content is paged: you get up to \`max_length\` characters starting at \`start_index\`; the result says which start_index to use next. Paging through the same URL does not download it again.
- \`raw=true\` returns the page's HTML source instead of Markdown (for inspecting markup, scripts or metadata).
- JSON, plain text and other text types are returned as they are, with their content type; images are returned as images; PDFs and other binary files are described, not dumped.
- http and https only; redirects are followed. Cloud metadata and link-local addresses are refused; while the session's network is off (sandbox), so are loopback and private addresses (127.0.0.1, localhost, 10.x, 192.168.x…).
- Use web_search first when you do not know the URL.`;

const inputSchema = z.strictObject({
  url: z.string().describe("The http:// or https:// URL to fetch"),
  max_length: z
    .number()
    .int()
    .min(1)
    .max(1_000_000)
    .default(DEFAULT_MAX_LENGTH)
    .describe("Maximum number of characters to return (default 5000)"),
  start_index: z
    .number()
    .int()
    .min(0)
    .default(0)
    .describe("Character offset to start from, for reading the next part of a long page (default 0)"),
  raw: z.boolean().default(false).describe("Return the raw HTML instead of Markdown (default false)"),
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
      return webFetch(args.url, args.max_length, args.start_index, args.raw, cache, extra.signal, guard);
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
): Promise<CallToolResult> {
  // The guard is part of the key: a page fetched while the network was on is not served once it is off.
  const key = `${raw ? "raw" : "md"} ${guard} ${url}`;
  let page = cache.get(key);
  if (!page) {
    try {
      const response = await fetchUrl(url, {
        timeoutMs: webTimeoutMs(FETCH_TIMEOUT_MS),
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
