import type { LookupAddress } from "node:dns";
import { lookup } from "node:dns/promises";
import { isIP, type LookupFunction } from "node:net";

/**
 * Host names of cloud instance-metadata services. They hand out credentials to whoever asks from inside the
 * instance, so a fetch tool driven by a model must never reach them (the classic SSRF target).
 */
const METADATA_HOSTS = new Set([
  "metadata",
  "metadata.google.internal",
  "metadata.goog",
  "metadata.azure.com",
  "instance-data",
  "instance-data.ec2.internal",
  "metadata.tencentyun.com",
  "metadata.platformequinix.com",
]);

/**
 * Which addresses a fetch refuses: `"metadata"` (always) refuses link-local and cloud-metadata addresses;
 * `"private"` (the session's network is off) refuses every address that is not public too: loopback, private networks
 * (RFC 1918, unique-local IPv6), carrier-grade NAT, unspecified, multicast and reserved ranges.
 */
export type AddressGuard = "metadata" | "private";

/** Why an IPv4 address is refused under `guard`, or undefined when it is allowed. */
function blockedV4Reason(v4: string, guard: AddressGuard): string | undefined {
  const [a = 0, b = 0] = v4.split(".").map(Number);
  if (a === 169 && b === 254) return "a link-local address (169.254.0.0/16, where cloud metadata services live)";
  if (v4 === "100.100.100.200") return "the Alibaba Cloud metadata address";
  if (guard === "metadata") return undefined;
  if (a === 127) return "a loopback address (127.0.0.0/8)";
  if (a === 0) return "an unspecified address (0.0.0.0/8, which reaches this machine)";
  if (a === 10) return "a private address (10.0.0.0/8)";
  if (a === 172 && b >= 16 && b <= 31) return "a private address (172.16.0.0/12)";
  if (a === 192 && b === 168) return "a private address (192.168.0.0/16)";
  if (a === 100 && b >= 64 && b <= 127) return "a shared private address (100.64.0.0/10, carrier-grade NAT)";
  if (a === 198 && (b === 18 || b === 19)) return "a private benchmarking address (198.18.0.0/15)";
  if (a === 192 && b === 0 && Number(v4.split(".")[2]) === 0) return "a reserved address (192.0.0.0/24)";
  if (a >= 224) return "a multicast or reserved address (224.0.0.0/3)";
  return undefined;
}

/** Why an IPv6 address (that carries no IPv4 address) is refused under `guard`, or undefined. */
function blockedV6Reason(groups: readonly number[], guard: AddressGuard): string | undefined {
  const first = groups[0] ?? 0;
  if ((first & 0xffc0) === 0xfe80) return "a link-local IPv6 address (fe80::/10)";
  if (groups.map((g) => g.toString(16)).join(":") === "fd00:ec2:0:0:0:0:0:254")
    return "the AWS IPv6 metadata address (fd00:ec2::254)";
  if (guard === "metadata") return undefined;
  const allZeroBefore = (last: number) => groups.slice(0, last + 1).every((g) => g === 0);
  if (allZeroBefore(6) && groups[7] === 1) return "the IPv6 loopback address (::1)";
  if (allZeroBefore(7)) return "the unspecified IPv6 address (::, which reaches this machine)";
  if ((first & 0xfe00) === 0xfc00) return "a unique-local IPv6 address (fc00::/7, a private network)";
  if ((first & 0xffc0) === 0xfec0) return "a site-local IPv6 address (fec0::/10)";
  if ((first & 0xff00) === 0xff00) return "a multicast IPv6 address (ff00::/8)";
  return undefined;
}

/**
 * Why an address is refused under `guard` (default `"metadata"`: loopback and private networks stay allowed), or
 * undefined when it is allowed. IPv6 forms that carry an IPv4 address (mapped `::ffff:a.b.c.d`, compatible
 * `::a.b.c.d`, NAT64 `64:ff9b::/96` and `64:ff9b:1::/48`, 6to4 `2002::/16`, Teredo `2001::/32`) are judged by that
 * IPv4 address: a NAT64 gateway or a 6to4 relay would carry the connection to it.
 */
export function blockedAddressReason(ip: string, guard: AddressGuard = "metadata"): string | undefined {
  if (isIP(ip) === 4) return blockedV4Reason(ip, guard);
  if (isIP(ip) !== 6) return undefined;
  const groups = expandV6(ip);
  if (!groups) return undefined;
  for (const { v4, form } of embeddedV4(groups)) {
    // `::` and `::1` are IPv6's own, not the IPv4-compatible 0.0.0.0 and 0.0.0.1.
    if (form !== "" && groups.slice(0, 6).every((g) => g === 0) && (groups[6] ?? 0) === 0) continue;
    const reason = blockedV4Reason(v4, guard);
    if (reason) return form ? `${reason}, written as ${form}` : reason;
  }
  return blockedV6Reason(groups, guard);
}

/** The IPv4 addresses an IPv6 address carries, with the name of the form (empty for the plain mapped form). */
function embeddedV4(groups: readonly number[]): Array<{ v4: string; form: string }> {
  const g = (i: number) => groups[i] ?? 0;
  const dotted = (hi: number, lo: number) => `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
  const found: Array<{ v4: string; form: string }> = [];
  const zeroThrough = (last: number) => groups.slice(0, last + 1).every((x) => x === 0);
  if (zeroThrough(4) && g(5) === 0xffff) found.push({ v4: dotted(g(6), g(7)), form: "" });
  if (zeroThrough(5)) found.push({ v4: dotted(g(6), g(7)), form: "an IPv4-compatible IPv6 address (::a.b.c.d)" });
  if (g(0) === 0x64 && g(1) === 0xff9b && (g(2) === 0 || g(2) === 1))
    found.push({ v4: dotted(g(6), g(7)), form: "a NAT64 IPv6 address (64:ff9b::/96)" });
  if (g(0) === 0x2002) found.push({ v4: dotted(g(1), g(2)), form: "a 6to4 IPv6 address (2002::/16)" });
  if (g(0) === 0x2001 && g(1) === 0) {
    found.push({ v4: dotted(g(2), g(3)), form: "a Teredo IPv6 address (2001::/32)" });
    found.push({ v4: dotted(g(6) ^ 0xffff, g(7) ^ 0xffff), form: "a Teredo IPv6 address (2001::/32)" });
  }
  return found;
}

/** The eight 16-bit groups of an IPv6 address (dotted IPv4 tails included), or undefined if malformed. */
function expandV6(ip: string): number[] | undefined {
  let text = ip.split("%")[0] ?? ip;
  const tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (tail?.[1]) {
    const [a = 0, b = 0, c = 0, d = 0] = tail[1].split(".").map(Number);
    text = `${text.slice(0, -tail[1].length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = "", rest] = text.split("::");
  const left = head ? head.split(":") : [];
  const right = rest ? rest.split(":") : [];
  const missing = 8 - left.length - right.length;
  if (rest === undefined ? left.length !== 8 : missing < 0) return undefined;
  const groups = [...left, ...Array<string>(Math.max(0, missing)).fill("0"), ...right].map((g) =>
    Number.parseInt(g, 16),
  );
  return groups.some((g) => Number.isNaN(g)) ? undefined : groups;
}

/** Result of {@link checkFetchTarget}. */
export type TargetCheck = { ok: true } | { ok: false; reason: string };

/**
 * Decides, before any connection, whether `url` may be fetched: http(s) only, no metadata host names, no IP literal
 * that is link-local or a metadata address. The addresses a host *name* resolves to are checked by
 * {@link guardedLookup} inside the connection itself, so what is checked is what is connected to. Called for the
 * first URL and again for every redirect hop.
 */
export function checkFetchTarget(url: URL, guard: AddressGuard = "metadata"): TargetCheck {
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return { ok: false, reason: `only http and https URLs can be fetched, not ${url.protocol.replace(/:$/, "")}:` };
  }
  const host = url.hostname
    .replace(/^\[|\]$/g, "")
    .replace(/\.$/, "")
    .toLowerCase();
  if (METADATA_HOSTS.has(host)) {
    return { ok: false, reason: `${host} is a cloud metadata service, which web_fetch refuses to contact` };
  }
  const literal = isIP(host) ? blockedAddressReason(host, guard) : undefined;
  if (literal)
    return { ok: false, reason: `${host} is ${literal}, which web_fetch refuses to contact${offNote(guard)}` };
  return { ok: true };
}

/** What a refusal adds when it comes from the network being off. */
function offNote(guard: AddressGuard): string {
  return guard === "private" ? " while the session's network is off (only public addresses)" : "";
}

/** Resolves a host name to all its addresses: the seam a test replaces to play a rebinding DNS server. */
export type Resolve = (hostname: string) => Promise<LookupAddress[]>;

/** The system resolver (getaddrinfo, as Node's own connections use). */
export const systemResolve: Resolve = (hostname) => lookup(hostname, { all: true, verbatim: true });

/** The error of a connection refused because its host name resolved to a refused address. */
export class BlockedAddressError extends Error {
  readonly code = "ECROWBLOCKED";
  constructor(
    readonly hostname: string,
    readonly address: string,
    reason: string,
    guard: AddressGuard = "metadata",
  ) {
    super(`${hostname} resolves to ${address}, ${reason}, which web_fetch refuses to contact${offNote(guard)}`);
  }
}

/**
 * The `lookup` of the sockets of a guarded fetch: resolves once, refuses (under `guard`) the connection (a {@link BlockedAddressError})
 * when any answer is a refused address, and otherwise hands the socket exactly the addresses it checked. Resolving
 * apart from the connection and connecting by name would ask DNS twice, and a rebinding server answers the second
 * time with 169.254.169.254.
 */
export function guardedLookup(resolve: Resolve = systemResolve, guard: AddressGuard = "metadata"): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname).then(
      (all) => {
        const family = options.family === 4 || options.family === 6 ? options.family : undefined;
        const addresses = family ? all.filter((a) => a.family === family) : all;
        for (const { address } of all) {
          const reason = blockedAddressReason(address, guard);
          if (reason) {
            callback(new BlockedAddressError(hostname, address, reason, guard), "");
            return;
          }
        }
        const first = addresses[0];
        if (!first) {
          const error: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname}`);
          error.code = "ENOTFOUND";
          callback(error, "");
          return;
        }
        if (options.all) callback(null, addresses);
        else callback(null, first.address, first.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, ""),
    );
  };
}
