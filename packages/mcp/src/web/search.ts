import { startDeadline } from "@crow/util";
import { describeNetworkError, networkErrorCode } from "./http.js";

/** One search hit (url and title always present after parsing; content may be ""). */
export interface SearchResult {
  title: string;
  url: string;
  content: string;
}

/** The parts of a SearXNG JSON answer that web_search shows. */
export interface ParsedSearch {
  results: SearchResult[];
  infoboxes: Array<{ infobox: string; id: string; content: string; urls: Array<{ title: string; url: string }> }>;
  answers: Array<{ answer: string; url: string }>;
  suggestions: string[];
  corrections: string[];
  /** Engines that failed, as "name (reason)". */
  unresponsive: string[];
}

/** A query's outcome: its parsed answer, or an error message meant for the model. */
export type QueryOutcome =
  | { query: string; ok: true; search: ParsedSearch }
  | { query: string; ok: false; error: string };

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);
const str = (value: unknown): string =>
  typeof value === "string" ? value.trim() : typeof value === "number" ? String(value) : "";
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

/**
 * Reads a SearXNG `format=json` answer tolerantly: every field is optional, results without a URL are dropped,
 * a missing title falls back to the URL, answers may be strings (older SearXNG) or `{answer, url}` objects (newer),
 * unresponsive engines may be `[name, reason]` pairs or objects. Only a non-object answer is an error.
 */
export function parseSearchResponse(data: unknown): ParsedSearch | undefined {
  if (!isObject(data)) return undefined;
  const results: SearchResult[] = [];
  for (const item of list(data.results)) {
    if (!isObject(item)) continue;
    const url = str(item.url);
    if (!url) continue;
    results.push({ url, title: str(item.title) || url, content: str(item.content) || str(item.snippet) });
  }
  const infoboxes = list(data.infoboxes)
    .filter(isObject)
    .map((box) => ({
      infobox: str(box.infobox),
      id: str(box.id),
      content: str(box.content),
      urls: list(box.urls)
        .filter(isObject)
        .map((u) => ({ title: str(u.title), url: str(u.url) }))
        .filter((u) => u.url !== ""),
    }));
  const answers = list(data.answers)
    .map((a) =>
      isObject(a) ? { answer: str(a.answer) || str(a.content), url: str(a.url) } : { answer: str(a), url: "" },
    )
    .filter((a) => a.answer !== "");
  const unresponsive = list(data.unresponsive_engines)
    .map((engine) => {
      const [name, reason] = Array.isArray(engine)
        ? [str(engine[0]), str(engine[1])]
        : isObject(engine)
          ? [str(engine.engine ?? engine.name), str(engine.error_type ?? engine.error ?? engine.reason)]
          : [str(engine), ""];
      return name ? (reason ? `${name} (${reason})` : name) : "";
    })
    .filter((s) => s !== "");
  const strings = (value: unknown) =>
    list(value)
      .map(str)
      .filter((s) => s !== "");
  return {
    results,
    infoboxes,
    answers,
    suggestions: strings(data.suggestions),
    corrections: strings(data.corrections),
    unresponsive,
  };
}

/**
 * One query's block in upstream's format ("Query:", "Results:", infoboxes, "No results found", then
 * Title/URL/Content per result up to `limit`), plus what upstream dropped: direct answers, and when nothing was
 * found, the engines that failed and SearXNG's suggestions.
 */
export function formatOutcome(outcome: QueryOutcome, limit: number): string {
  let out = `Query:\n${outcome.query}\n\n`;
  if (!outcome.ok) return `${out}Error: ${outcome.error}\n`;
  const { search } = outcome;
  out += "Results:\n";
  for (const answer of search.answers) out += `Answer: ${answer.answer}${answer.url ? ` (${answer.url})` : ""}\n\n`;
  for (const box of search.infoboxes) {
    out += `Infobox: ${box.infobox}\nID: ${box.id}\nContent: ${box.content}\n`;
    if (box.urls.length > 0)
      out += `Links: ${box.urls.map((u) => (u.title ? `${u.title} <${u.url}>` : u.url)).join(", ")}\n`;
    out += "\n";
  }
  if (search.results.length === 0) {
    out += "No results found\n";
    if (search.unresponsive.length > 0) out += `Engines that did not respond: ${search.unresponsive.join(", ")}\n`;
    const alternatives = [...search.corrections, ...search.suggestions];
    if (alternatives.length > 0) out += `Suggestions: ${alternatives.join("; ")}\n`;
  }
  for (const result of search.results.slice(0, limit)) {
    out += `Title: ${result.title}\nURL: ${result.url}\nContent: ${result.content}\n\n`;
  }
  return out;
}

/** Options of {@link searchOne}. */
export interface SearchOptions {
  timeoutMs: number;
  signal?: AbortSignal;
}

/** The `/search` endpoint under a SearXNG base URL that may itself have a path (`http://host/searxng`). */
export function searchEndpoint(baseUrl: string, query: string): URL {
  const base = new URL(baseUrl.endsWith("/") ? baseUrl : `${baseUrl}/`);
  const url = new URL("search", base);
  url.searchParams.set("q", query);
  url.searchParams.set("format", "json");
  return url;
}

/** Runs one query against SearXNG; never throws — failures come back as `{ok: false, error}` for inline display. */
export async function searchOne(baseUrl: string, query: string, options: SearchOptions): Promise<QueryOutcome> {
  let endpoint: URL;
  try {
    endpoint = searchEndpoint(baseUrl, query);
  } catch {
    return { query, ok: false, error: `SEARXNG_URL is not a valid URL: ${baseUrl}` };
  }
  const base = endpoint.origin + endpoint.pathname.replace(/\/search$/, "");
  const deadline = startDeadline(options.timeoutMs, options.signal);
  try {
    const response = await fetch(endpoint, { signal: deadline.signal, headers: { Accept: "application/json" } });
    const body = await response.text();
    if (!response.ok) return { query, ok: false, error: describeStatus(base, response.status, response.statusText) };
    let data: unknown;
    try {
      data = JSON.parse(body);
    } catch {
      return { query, ok: false, error: describeMalformed(base, response.headers.get("content-type"), body) };
    }
    const search = parseSearchResponse(data);
    if (!search)
      return { query, ok: false, error: describeMalformed(base, response.headers.get("content-type"), body) };
    return { query, ok: true, search };
  } catch (error) {
    if (options.signal?.aborted) return { query, ok: false, error: "The search was cancelled." };
    if (deadline.timedOut()) {
      return {
        query,
        ok: false,
        error: `SearXNG at ${base} did not answer within ${options.timeoutMs / 1000} s. Its engines may be slow or blocked; try again, or with fewer queries.`,
      };
    }
    return { query, ok: false, error: describeConnectionError(base, error) };
  } finally {
    deadline.clear();
  }
}

function describeStatus(base: string, status: number, statusText: string): string {
  const http = `HTTP ${status}${statusText ? ` ${statusText}` : ""}`;
  if (status === 403) {
    return `SearXNG at ${base} refused the JSON API (${http}): the json output format is not enabled. Add it to search.formats in SearXNG's settings.yml and restart SearXNG:
  search:
    formats:
      - html
      - json`;
  }
  if (status === 429) {
    return `SearXNG at ${base} rate-limited the request (${http}). Its bot limiter blocks API clients: on a private instance set "limiter: false" under server: in settings.yml, or try again later.`;
  }
  if (status === 404)
    return `SearXNG was not found at ${base} (${http}). Check SEARXNG_URL: it should be the instance's base URL.`;
  if (status >= 500) return `SearXNG at ${base} failed (${http}). Try again; if it persists, check SearXNG's logs.`;
  return `SearXNG at ${base} answered ${http}.`;
}

function describeMalformed(base: string, contentType: string | null, body: string): string {
  const start = body.trim().slice(0, 80).replace(/\s+/g, " ");
  return `SearXNG at ${base} returned a response that is not a valid JSON search result (content type ${contentType ?? "none"}${start ? `, starting with "${start}"` : ", empty body"}). Check that SEARXNG_URL points at a SearXNG instance with the json format enabled.`;
}

function describeConnectionError(base: string, error: unknown): string {
  if (networkErrorCode(error) === "ECONNREFUSED") {
    return `Could not connect to SearXNG at ${base} (connection refused). Is SearXNG running? Start one with Docker, e.g.
  docker run -d --name searxng -p 2946:8080 -v ./searxng:/etc/searxng searxng/searxng
with "json" added to search.formats in ./searxng/settings.yml, or set SEARXNG_URL to the address of a running instance.`;
  }
  return `Could not reach SearXNG at ${base}: ${describeNetworkError(error)} Set SEARXNG_URL if SearXNG runs elsewhere.`;
}
