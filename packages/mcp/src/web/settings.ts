/** Defaults of the web tools. */
export const SEARCH_TIMEOUT_MS = 20_000;
export const FETCH_TIMEOUT_MS = 30_000;
/** Largest response body web_fetch downloads (after decompression). */
export const FETCH_MAX_BYTES = 10 * 1024 * 1024;
export const FETCH_MAX_REDIRECTS = 10;
/** How long a fetched page stays cached for paging, and how much the cache may hold (characters). */
export const FETCH_CACHE_TTL_MS = 5 * 60_000;
export const FETCH_CACHE_ENTRIES = 20;
export const FETCH_CACHE_CHARS = 40 * 1024 * 1024;
export const DEFAULT_SEARXNG_URL = "http://localhost:2946";

/**
 * The timeout of the web tools in milliseconds: `CROW_WEB_TIMEOUT` (seconds) when set to a positive number,
 * else `fallbackMs`. One variable for both tools, for slow networks and for tests.
 */
export function webTimeoutMs(fallbackMs: number): number {
  const seconds = Number(process.env.CROW_WEB_TIMEOUT);
  return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : fallbackMs;
}

/** The SearXNG base URL: the server option, else env SEARXNG_URL, else http://localhost:2946. */
export function searxngUrl(option: string | undefined): string {
  return option || process.env.SEARXNG_URL || DEFAULT_SEARXNG_URL;
}
