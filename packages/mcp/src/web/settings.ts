/** Defaults of the web tools (CROW_WEB_TIMEOUT and SEARXNG_URL, read by settings.ts, replace the first two and the URL). */
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
