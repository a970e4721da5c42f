/**
 * Who may talk to `crow acp --listen`: what every HTTP request and WebSocket upgrade must pass before the ACP
 * transport sees it. The Host header first (DNS rebinding: a web page cannot reach a loopback Crow through a name
 * it controls), then the Origin header when there is one (a page on another site could otherwise open a WebSocket,
 * which browsers do not restrict by origin), then the bearer token, compared in constant time. Whoever passes can run
 * commands as this user through the agent's tools, so none of the three is ever off.
 */
import { timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { allowedHostnames, hostOf } from "../base/hosts.js";

export type Refusal = { status: 401 | 403 | 404; reason: string };

/** The host name of an Origin header (`http://[::1]:3000` → `::1`), undefined for `null` or garbage. */
function originHost(origin: string): string | undefined {
  try {
    return new URL(origin).hostname.replace(/^\[|\]$/g, "").toLowerCase();
  } catch {
    return undefined;
  }
}

/**
 * Builds the check of one request for a server bound to `host`: loopback names (and the bound address, or the
 * machine's own names for a wildcard bind) plus `allowHosts` are accepted in Host and Origin. Returns a refusal
 * (403 for Host and Origin, 401 for the token) or undefined when the request may go on.
 */
export function frontDoor(host: string, token: string, allowHosts: readonly string[] = []) {
  const hosts = allowedHostnames(host, allowHosts);
  const expected = Buffer.from(`Bearer ${token}`);
  return (req: IncomingMessage): Refusal | undefined => {
    const name = hostOf(req.headers.host);
    if (!name || !hosts.has(name)) {
      return {
        status: 403,
        reason: `Host "${req.headers.host ?? ""}" is not served here: connect to the address crow acp --listen printed, or start it with --allowed-host ${name ?? "NAME"}.`,
      };
    }
    const origin = req.headers.origin;
    if (origin !== undefined) {
      const from = originHost(origin);
      if (!from || !hosts.has(from)) {
        return {
          status: 403,
          reason: `Origin "${origin}" may not use this agent: only pages served from an allowed host may (start crow acp --listen with --allowed-host ${from ?? "NAME"} to allow it).`,
        };
      }
    }
    const given = Buffer.from(req.headers.authorization ?? "");
    if (given.length === expected.length && timingSafeEqual(given, expected)) return undefined;
    return {
      status: 401,
      reason:
        "Unauthorized: send the token as 'Authorization: Bearer <token>' (crow acp --listen printed it, or reads it from --token-file or CROW_ACP_TOKEN).",
    };
  };
}
