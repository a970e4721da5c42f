/**
 * Whether a provider's endpoint can be reached at all, cheaply: the two failures no prompt can get past and that a
 * new configuration (`crow init`) or starting the local server fixes. Slowness is not judged here (a slow provider
 * is still a provider); neither is the key (that needs a request the provider may bill or rate-limit).
 *
 * - A loopback endpoint (Ollama, LM Studio, llama.cpp, vLLM on this machine): one TCP connect, which the kernel
 *   answers at once, accepted or refused. No network round trip.
 * - Any other host: one DNS lookup. A name that does not exist (`ENOTFOUND`, a mistyped base URL) is unreachable;
 *   a lookup that fails for another reason (offline, a resolver timeout) says nothing about the configuration.
 */
import { lookup } from "node:dns/promises";
import { isIP, Socket } from "node:net";
import { isLoopback } from "../base/hosts.js";

/** What a probe found: reachable as far as it can tell, or why not (a sentence, with its full stop). */
export type Reach = { ok: true } | { ok: false; reason: string };

/** How long a probe may take; past it the endpoint counts as reachable (a slow one is not this check's business). */
export const PROBE_TIMEOUT_MS = 1500;

/** The host and port of an http(s) base URL, or undefined when it is not one. */
function endpoint(baseURL: string): { host: string; port: number } | undefined {
  if (!URL.canParse(baseURL)) return undefined;
  const url = new URL(baseURL);
  if (url.protocol !== "http:" && url.protocol !== "https:") return undefined;
  const host = url.hostname.replace(/^\[|\]$/g, "");
  const port = url.port ? Number(url.port) : url.protocol === "https:" ? 443 : 80;
  return { host, port };
}

/** Whether `baseURL` points at this machine (a connect there costs no network round trip). */
export function isLoopbackUrl(baseURL: string): boolean {
  const host = endpoint(baseURL)?.host;
  return host !== undefined && isLoopback(host);
}

/** One TCP connect to a loopback endpoint: refused means nothing listens there. */
function connect(host: string, port: number, timeoutMs: number): Promise<Reach> {
  return new Promise((resolve) => {
    const socket = new Socket();
    const done = (reach: Reach) => {
      socket.destroy();
      resolve(reach);
    };
    socket.setTimeout(timeoutMs, () => done({ ok: true }));
    socket.once("connect", () => done({ ok: true }));
    socket.once("error", (error: NodeJS.ErrnoException) =>
      done(
        error.code === "ECONNREFUSED"
          ? {
              ok: false,
              reason: `nothing is listening at ${host}:${port} (connection refused). Is the server running?`,
            }
          : { ok: true },
      ),
    );
    // `localhost` may be 127.0.0.1 or ::1 (from the hosts file, no network): both are tried, as fetch does.
    socket.connect({ host, port, autoSelectFamily: true });
  });
}

/** One DNS lookup: a name that does not exist is unreachable. */
async function resolve(host: string, timeoutMs: number): Promise<Reach> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<Reach>((done) => {
    timer = setTimeout(() => done({ ok: true }), timeoutMs);
    timer.unref();
  });
  const answer = lookup(host).then(
    (): Reach => ({ ok: true }),
    (error: NodeJS.ErrnoException): Reach =>
      error.code === "ENOTFOUND"
        ? { ok: false, reason: `the host name ${host} does not exist (DNS). Is the base URL right?` }
        : { ok: true },
  );
  try {
    return await Promise.race([answer, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Probes `baseURL` as described above; never rejects. */
export function probeEndpoint(baseURL: string, timeoutMs = PROBE_TIMEOUT_MS): Promise<Reach> {
  const target = endpoint(baseURL);
  if (!target) return Promise.resolve({ ok: true });
  if (isLoopbackUrl(baseURL)) return connect(target.host, target.port, timeoutMs);
  if (isIP(target.host) !== 0) return Promise.resolve({ ok: true });
  return resolve(target.host, timeoutMs);
}
