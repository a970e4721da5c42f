/**
 * crow-mcp's guarded HTTP GET as a dependency-free entry (subpath export `@crow/mcp/guarded-fetch`, Node built-ins
 * only): the agent fetches what a prompt points at (an image URL) under the same rules as web_fetch — the address
 * guard checked on the address actually connected to, for every redirect hop, a size cap applied while reading, a
 * deadline that survives garbage collection, and the caller's cancellation.
 */
export { type FetchedResponse, type FetchLimits, fetchUrl, ResponseRefused, WebError } from "./web/http.js";
