/**
 * `crow sessions serve`: a read-only web viewer over a session store, on node:http. Pages are rendered here (every
 * value escaped, model text through the safe Markdown renderer); the bundled page script (bundle/viewer.js, built by
 * scripts/bundle.mjs) adds the chart, loads long timelines piece by piece and follows a running session through
 * server-sent events, which poll the store — the session may be running in another process or on another host.
 */
import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { errorText, type Store } from "@crow/core";
import { resolveSessionId } from "@crow/core/internal";
import { allowedHostnames } from "../base/hosts.js";
import { ownPackageRoot } from "../base/package-paths.js";
import { checkpointMarks, type MarkLoader } from "./checkpoint-marks.js";
import { comparePage } from "./compare-page.js";
import { evalComparePage, evalRunPage, evalRunsPage, evalSide } from "./eval-page.js";
import { check, tokenCookieName } from "./guard.js";
import { html, layout, notFoundPage } from "./html.js";
import { chartData, type Prices } from "./insights.js";
import { sessionPage } from "./session-page.js";
import { sessionsPage } from "./sessions-page.js";
import { timelinePage } from "./timeline.js";

export interface ViewerOptions {
  store: Store;
  /** Model prices for costs (config.yaml's `price`). */
  prices?: Prices;
  /** Interface to bind (default 127.0.0.1). */
  host?: string;
  /** TCP port (default 0: a free one). */
  port?: number;
  /**
   * The token every request must carry (`?token=` once, then a cookie; or `Authorization: Bearer`), on loopback too:
   * generated when not given. `false` serves without one, only for a viewer embedded behind a guard of its own
   * (`crow sessions serve` never does).
   */
  token?: string | false;
  /** More Host header names to accept (off loopback: the name people use to reach this machine). */
  allowedHosts?: string[];
  /** How often a live page's event stream looks at the store (default 500 ms). */
  pollMs?: number;
  /** The Crow home whose `checkpoints/` holds the shadow repositories: the timeline then shows each turn's diff. */
  checkpointsHome?: string;
  /** Where viewer.js and viewer.css are (default: the @crow/agent package's bundle/). */
  assetsDir?: string;
}

export interface RunningViewer {
  /** The address to open (with `?token=…` when a token is required). */
  readonly url: string;
  /** The viewer's origin without the token (`http://127.0.0.1:PORT`). */
  readonly origin: string;
  readonly token?: string;
  close(): Promise<void>;
}

// Everything a page needs is served here: no external script, style, connection or image (an external image in
// model text would be fetched when the session is opened, leaking its URL — Markdown images render as links).
const SECURITY_HEADERS = {
  "Content-Security-Policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
};

const ASSETS: Record<string, string> = {
  "/assets/viewer.js": "text/javascript; charset=utf-8",
  "/assets/viewer.css": "text/css; charset=utf-8",
};

/** The tab's icon (a crow-black circle with a white eye), served at /favicon.ico too: browsers ask for it. */
const FAVICON =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><circle cx="8" cy="8" r="7" fill="#222"/><circle cx="10.5" cy="6" r="1.5" fill="#fff"/></svg>';

function send(res: ServerResponse, status: number, type: string, body: string | Buffer, extra = {}): void {
  res.writeHead(status, { ...SECURITY_HEADERS, "Content-Type": type, "Cache-Control": "no-store", ...extra });
  res.end(body);
}

const page = (res: ServerResponse, status: number, body: string) => send(res, status, "text/html; charset=utf-8", body);
const json = (res: ServerResponse, value: unknown) => send(res, 200, "application/json", JSON.stringify(value));

/** Streams `change` events while the session's update time or message count moves. */
async function events(req: IncomingMessage, res: ServerResponse, store: Store, id: string, pollMs: number) {
  res.writeHead(200, { ...SECURITY_HEADERS, "Content-Type": "text/event-stream", "Cache-Control": "no-store" });
  let last = "";
  let closed = false;
  req.on("close", () => {
    closed = true;
  });
  while (!closed) {
    try {
      const session = await store.getSession(id);
      if (!session) break;
      const state = { updatedAt: session.updatedAt, messages: await store.countMessages(id), title: session.title };
      const key = JSON.stringify(state);
      if (key !== last) {
        last = key;
        res.write(`event: change\ndata: ${key}\n\n`);
      } else res.write(": idle\n\n");
    } catch {
      // a failed poll (database busy or restarting) is retried on the next tick
    }
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
  res.end();
}

async function route(
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  options: Required<Pick<ViewerOptions, "store" | "prices" | "pollMs" | "assetsDir">> & { marks: MarkLoader },
) {
  const { store, prices, marks } = options;
  let parts: string[];
  try {
    parts = url.pathname.split("/").slice(1).map(decodeURIComponent);
  } catch {
    return page(res, 404, notFoundPage(`Nothing at ${url.pathname}: the address is not valid URL encoding.`));
  }
  if (url.pathname === "/") {
    const query = Object.fromEntries(
      ["cwd", "q", "cursor"].flatMap((k) => (url.searchParams.get(k) ? [[k, url.searchParams.get(k)]] : [])),
    );
    return page(res, 200, await sessionsPage(store, query, prices));
  }
  if (url.pathname === "/favicon.ico" || url.pathname === "/favicon.svg") {
    return send(res, 200, "image/svg+xml", FAVICON, { "Cache-Control": "max-age=86400" });
  }
  if (ASSETS[url.pathname]) {
    const file = path.join(options.assetsDir, path.basename(url.pathname));
    return send(res, 200, ASSETS[url.pathname] as string, await readFile(file));
  }
  if (parts[0] === "s" && parts[1] && parts.length <= 3) {
    const session = await store.getSession(parts[1]);
    if (!session && parts.length === 2) {
      // A unique beginning of an id (as typed after crow run -s) goes to the whole id's page.
      const full = await resolveSessionId(store, parts[1]).catch(() => undefined);
      if (full) {
        res.writeHead(303, { ...SECURITY_HEADERS, Location: `/s/${encodeURIComponent(full)}` });
        return res.end();
      }
    }
    if (!session) return page(res, 404, notFoundPage(`There is no session "${parts[1]}" in ${store.location}.`));
    if (parts.length === 2) return page(res, 200, await sessionPage(store, session, prices, marks));
    if (parts[2] === "timeline") {
      const from = Number(url.searchParams.get("from") ?? "0");
      if (!Number.isInteger(from) || from < 0) return page(res, 400, notFoundPage(`"from" must be a message number.`));
      const summary = url.searchParams.get("summary") === "1" ? 1 : undefined;
      const result = await timelinePage(store, session.id, from, summary, marks);
      return json(res, { html: result.html.value, next: result.next, more: result.more });
    }
    if (parts[2] === "chart") return json(res, await chartData(store, session, prices));
    if (parts[2] === "events") return events(req, res, store, session.id, options.pollMs);
  }
  if (parts[0] === "evals") {
    if (parts.length === 1 || (parts.length === 2 && parts[1] === "")) return page(res, 200, await evalRunsPage(store));
    if (parts[1] === "compare" && parts.length === 2) {
      const sides = await Promise.all(["a", "b"].map((k) => evalSide(store, url.searchParams.get(k) ?? "")));
      const [a, b] = sides;
      if (typeof a === "string" || typeof b === "string" || !a || !b) {
        const why = sides.filter((side) => typeof side === "string").join(" ");
        return page(res, 400, notFoundPage(`Pick two eval runs to compare. ${why}`));
      }
      return page(res, 200, evalComparePage(a, b));
    }
    if (parts[1] && parts.length === 2) {
      const run = await store.evals.getRun(parts[1]);
      if (!run) return page(res, 404, notFoundPage(`There is no eval run "${parts[1]}" in ${store.location}.`));
      return page(res, 200, await evalRunPage(store, run));
    }
  }
  if (url.pathname === "/compare") {
    const ids = [...url.searchParams.getAll("id"), ...["a", "b"].flatMap((k) => url.searchParams.getAll(k))];
    if (ids.length !== 2) {
      return page(
        res,
        400,
        layout(
          "Pick two",
          html`<section class="notfound"><h1>Pick two sessions</h1><p>Select exactly two sessions on the <a href="/">sessions page</a> to compare them (got ${ids.length}).</p></section>`,
        ),
      );
    }
    const [a, b] = await Promise.all(ids.map((id) => store.getSession(id)));
    const missing = ids.find((_, i) => !(i === 0 ? a : b));
    if (!a || !b) return page(res, 404, notFoundPage(`There is no session "${missing}" in ${store.location}.`));
    return page(res, 200, await comparePage(store, a, b, prices));
  }
  return page(res, 404, notFoundPage(`Nothing at ${url.pathname}.`));
}

/** Starts the viewer; resolves once it listens. */
export async function startViewer(options: ViewerOptions): Promise<RunningViewer> {
  const host = options.host ?? "127.0.0.1";
  const token = options.token === false ? undefined : (options.token ?? randomBytes(18).toString("base64url"));
  // Named after the port, known once listening (no request arrives before).
  let cookie = tokenCookieName(0);
  const hosts = allowedHostnames(host, options.allowedHosts);
  const settings = {
    store: options.store,
    prices: options.prices ?? new Map(),
    pollMs: options.pollMs ?? 500,
    marks: checkpointMarks(options.store, options.checkpointsHome),
    assetsDir: options.assetsDir ?? path.join(ownPackageRoot(fileURLToPath(import.meta.url)), "bundle"),
  };
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://viewer");
    const verdict = check(req, url, hosts, token, cookie);
    if (!verdict.ok) {
      if (verdict.status === 303) {
        res.writeHead(303, { ...SECURITY_HEADERS, Location: verdict.location, "Set-Cookie": verdict.cookie });
        res.end();
      } else send(res, verdict.status, "text/plain; charset=utf-8", `${verdict.reason}\n`);
      return;
    }
    if (req.method !== "GET" && req.method !== "HEAD") {
      send(res, 405, "text/plain; charset=utf-8", "The viewer is read-only: GET only.\n", { Allow: "GET, HEAD" });
      return;
    }
    route(req, res, url, settings).catch((error: unknown) => {
      const message = errorText(error);
      if (res.headersSent) res.end();
      else
        page(
          res,
          500,
          layout("Error", html`<section class="notfound"><h1>The store failed</h1><p>${message}</p></section>`),
        );
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  cookie = tokenCookieName(address.port);
  const shown = address.family === "IPv6" ? `[${address.address}]` : address.address;
  const printable = host === "0.0.0.0" || host === "::" ? "127.0.0.1" : shown;
  const origin = `http://${printable}:${address.port}`;
  return {
    url: `${origin}/${token ? `?token=${token}` : ""}`,
    origin,
    ...(token ? { token } : {}),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
