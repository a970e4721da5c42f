/**
 * Host names a server of Crow's answers to (the session viewer, `crow acp --listen`): the Host header is always
 * checked against them, so that a web page cannot reach a local server through a name it controls (DNS rebinding).
 */
import { isIP } from "node:net";
import { hostname, networkInterfaces } from "node:os";

export const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1"]);
/**
 * Whether `host` (a name or an address, IPv6 without brackets) is this machine's loopback: localhost and the names
 * under it (RFC 6761), 127.0.0.0/8, ::1.
 */
export function isLoopback(host: string): boolean {
  const name = host.toLowerCase();
  if (name === "localhost" || name.endsWith(".localhost")) return true;
  if (isIP(name) === 4) return name.startsWith("127.");
  return name === "::1";
}

/** The Host header names accepted for a server bound to `host`. */
export function allowedHostnames(host: string, extra: readonly string[] = []): Set<string> {
  const names = new Set([...LOOPBACK, ...extra.map((h) => h.toLowerCase())]);
  if (host === "0.0.0.0" || host === "::") {
    names.add(hostname().toLowerCase());
    for (const list of Object.values(networkInterfaces())) for (const a of list ?? []) names.add(a.address);
  } else names.add(host.toLowerCase());
  return names;
}

/** The host name of a Host header (`[::1]:8080` → `::1`, `Example.org:80` → `example.org`). */
export function hostOf(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(header);
  if (bracketed) return bracketed[1]?.toLowerCase();
  return header.replace(/:\d+$/, "").toLowerCase();
}
