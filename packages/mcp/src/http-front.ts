/**
 * The front door of `crow-mcp --http`: what every request must pass before Express, the JSON body parser or an MCP
 * session sees it. Order matters: the Host header first (DNS-rebinding protection), then the bearer token, and only
 * then is the body read, so a caller without the token learns nothing (not even how a malformed body is parsed).
 */
import { timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { networkInterfaces, hostname as systemHostName } from "node:os";
import { jsonRpcError } from "./json-rpc-error.js";

/** Host names a loopback-bound server answers to. */
export const LOOPBACK_HOSTS = ["127.0.0.1", "localhost", "::1"];

/** Whether `host` is a loopback bind address. */
export function isLoopbackHost(host: string): boolean {
  return LOOPBACK_HOSTS.includes(host);
}

/** A host name as the URL API prints it in `URL.hostname` (IPv6 in brackets, lower case). */
function asUrlHostname(host: string): string {
  const bare = host.replace(/^\[|\]$/g, "");
  return bare.includes(":") ? `[${bare.toLowerCase()}]` : bare.toLowerCase();
}

/**
 * The Host header names accepted (DNS-rebinding protection, never off): loopback names for a loopback bind; the
 * bound host plus `allowedHosts` for another address; and for a wildcard bind (0.0.0.0, ::) without `allowedHosts`,
 * the machine's own names and interface addresses, so that a name an attacker points at this machine is refused.
 */
export function acceptedHostNames(host: string, allowedHosts: readonly string[] = []): string[] {
  const names = new Set<string>();
  if (isLoopbackHost(host)) for (const name of LOOPBACK_HOSTS) names.add(name);
  else if (host !== "0.0.0.0" && host !== "::") names.add(host);
  else if (allowedHosts.length === 0) {
    for (const name of LOOPBACK_HOSTS) names.add(name);
    names.add(systemHostName());
    for (const addresses of Object.values(networkInterfaces())) {
      for (const entry of addresses ?? []) names.add(entry.address);
    }
  }
  for (const name of allowedHosts) names.add(name);
  return [...names].map(asUrlHostname);
}

/** The hostname a request's Host header names, or undefined when it is missing or malformed. */
function requestHostname(req: IncomingMessage): string | undefined {
  const header = req.headers.host;
  if (!header) return undefined;
  try {
    return new URL(`http://${header}`).hostname;
  } catch {
    return undefined;
  }
}

/**
 * Checks one request against the accepted Host names and (when `token` is set) the bearer token; answers it with a
 * JSON-RPC error (403, 401) and returns false when it fails, true when it may go on.
 */
export function createFrontDoor(acceptedHosts: readonly string[], token: string | undefined) {
  const accepted = new Set(acceptedHosts);
  const expected = token === undefined ? undefined : Buffer.from(`Bearer ${token}`);
  return (req: IncomingMessage, res: ServerResponse): boolean => {
    const hostname = requestHostname(req);
    if (hostname === undefined || !accepted.has(hostname)) {
      jsonRpcError(
        res,
        403,
        `Forbidden: Host ${hostname ?? "(missing)"} is not served here; start crow-mcp with --allowed-host <name> to accept it`,
      );
      return false;
    }
    if (!expected) return true;
    const given = Buffer.from(req.headers.authorization ?? "");
    if (given.length === expected.length && timingSafeEqual(given, expected)) return true;
    res.setHeader("WWW-Authenticate", 'Bearer realm="crow-mcp"');
    jsonRpcError(res, 401, "Unauthorized: send the crow-mcp token as 'Authorization: Bearer <token>'");
    return false;
  };
}
