import { lookup } from "node:dns/promises";
import { isIP } from "node:net";

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

/** Why an address is refused, or undefined when it is allowed. Loopback and private networks stay allowed. */
export function blockedAddressReason(ip: string): string | undefined {
  const v4 = isIP(ip) === 4 ? ip : mappedV4(ip);
  if (v4) {
    const [a, b] = v4.split(".").map(Number);
    if (a === 169 && b === 254) return "a link-local address (169.254.0.0/16, where cloud metadata services live)";
    if (v4 === "100.100.100.200") return "the Alibaba Cloud metadata address";
    return undefined;
  }
  if (isIP(ip) !== 6) return undefined;
  const groups = expandV6(ip);
  if (!groups) return undefined;
  const first = groups[0] ?? 0;
  if ((first & 0xffc0) === 0xfe80) return "a link-local IPv6 address (fe80::/10)";
  if (groups.map((g) => g.toString(16)).join(":") === "fd00:ec2:0:0:0:0:0:254")
    return "the AWS IPv6 metadata address (fd00:ec2::254)";
  return undefined;
}

/** The IPv4 address inside an IPv4-mapped IPv6 address (`::ffff:169.254.169.254`), if it is one. */
function mappedV4(ip: string): string | undefined {
  if (isIP(ip) !== 6) return undefined;
  const groups = expandV6(ip);
  if (!groups || groups.slice(0, 5).some((g) => g !== 0) || groups[5] !== 0xffff) return undefined;
  const hi = groups[6] ?? 0;
  const lo = groups[7] ?? 0;
  return `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
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
 * Decides whether `url` may be fetched: http(s) only, no metadata host names, and no resolved address that is
 * link-local or a metadata address (every address the name resolves to is checked, so a DNS name pointing at
 * 169.254.169.254 is refused too). Called for the first URL and again for every redirect hop.
 */
export async function checkFetchTarget(url: URL): Promise<TargetCheck> {
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
  const literal = isIP(host) ? blockedAddressReason(host) : undefined;
  if (literal) return { ok: false, reason: `${host} is ${literal}, which web_fetch refuses to contact` };
  if (isIP(host)) return { ok: true };
  let addresses: Array<{ address: string }>;
  try {
    addresses = await lookup(host, { all: true, verbatim: true });
  } catch {
    // Unresolvable names fail later in fetch with the real DNS error, which is the clearer message.
    return { ok: true };
  }
  for (const { address } of addresses) {
    const reason = blockedAddressReason(address);
    if (reason)
      return { ok: false, reason: `${host} resolves to ${address}, ${reason}, which web_fetch refuses to contact` };
  }
  return { ok: true };
}
