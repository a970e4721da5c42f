/**
 * Who may talk to the viewer. The Host header is always checked (a page on another site cannot reach the viewer
 * through DNS rebinding): loopback names when bound to loopback; off loopback also the bound address, the machine's
 * own addresses for a wildcard bind, and `--allowed-host` names. A token is required too, on loopback as well (any
 * local user can reach a loopback port, and the store holds every transcript): given once as `?token=…` (the URL
 * `crow sessions serve` prints, as Jupyter does), it becomes an HttpOnly same-site cookie named after the port (two
 * viewers on one host keep their own); `Authorization: Bearer` works for scripts.
 */
import { timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { hostOf } from "../base/hosts.js";

/** The token cookie of the viewer on `port` (cookies are per host, not per port). */
export function tokenCookieName(port: number): string {
  return `crow_viewer_token_${port}`;
}

function same(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

function cookieToken(req: IncomingMessage, cookie: string): string | undefined {
  for (const part of (req.headers.cookie ?? "").split(";")) {
    const [name, ...rest] = part.trim().split("=");
    if (name === cookie) return decodeURIComponent(rest.join("="));
  }
  return undefined;
}

export type Verdict =
  | { ok: true }
  | { ok: false; status: 403; reason: string }
  | { ok: false; status: 401; reason: string }
  /** A valid `?token=`: set the cookie and redirect to the same URL without it. */
  | { ok: false; status: 303; location: string; cookie: string };

/** Checks one request against the Host list and (when set) the token, kept in the cookie named `cookie`. */
export function check(
  req: IncomingMessage,
  url: URL,
  hosts: ReadonlySet<string>,
  token: string | undefined,
  cookie: string,
): Verdict {
  const host = hostOf(req.headers.host);
  if (!host || !hosts.has(host)) {
    return {
      ok: false,
      status: 403,
      reason: `Host "${req.headers.host ?? ""}" is not served here. Use the address crow sessions serve printed, or start it with --allowed-host ${host ?? "NAME"}.`,
    };
  }
  if (token === undefined) return { ok: true };
  const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
  if ((bearer && same(bearer, token)) || same(cookieToken(req, cookie) ?? "", token)) return { ok: true };
  const query = url.searchParams.get("token");
  if (query !== null && same(query, token)) {
    url.searchParams.delete("token");
    return {
      ok: false,
      status: 303,
      location: `${url.pathname}${url.search}`,
      cookie: `${cookie}=${encodeURIComponent(token)}; HttpOnly; SameSite=Strict; Path=/`,
    };
  }
  return {
    ok: false,
    status: 401,
    reason: "This viewer needs its token: open the URL crow sessions serve printed (it ends in ?token=…).",
  };
}
