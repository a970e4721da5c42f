/**
 * The language servers of this crow-mcp process: one per language, workspace and confinement, shared by every
 * session that has all three alike, started on the first change of its language, started again after it died, and
 * stopped with the toolserver ({@link stopLanguageServers}; at exit, killed).
 */
import { errorText } from "../error-text.js";
import { log } from "../log.js";
import type { SandboxPolicy } from "../sandbox/policy.js";
import { LanguageClient } from "./client.js";
import { findServer } from "./find.js";
import type { Language } from "./languages.js";
import { serverPolicy } from "./launch.js";

const clients = new Map<string, LanguageClient>();
/** Files read before their language's server started, by server key: opened when it starts (the newest kept). */
const readBefore = new Map<string, Set<string>>();
/** How many read files are remembered per server before it starts. */
const MAX_READ_BEFORE = 16;
/** A server that ended before it answered initialize, by key: not started again before `until` (ms since epoch). */
const broken = new Map<string, { until: number; why: string }>();
/** How long a server that cannot start is left alone (every change would otherwise spawn it again). */
const BROKEN_PAUSE_MS = 60_000;
/** A server no change or read used for this long is stopped (a project's tsserver holds hundreds of MB). */
const IDLE_MS = 15 * 60_000;
let sweeper: NodeJS.Timeout | undefined;

/** Stops the servers idle past {@link IDLE_MS}; the files they had open are opened again by the next one. */
function sweepIdle(now = Date.now()): void {
  for (const [key, client] of clients) {
    if (now - client.lastUsed < IDLE_MS) continue;
    clients.delete(key);
    readBefore.set(key, new Set(client.openFiles().slice(-MAX_READ_BEFORE)));
    log.info(`stopping the idle ${client.language.name} language server in ${client.root}`);
    void client.stop().catch(() => client.kill());
  }
}
let exitHook = false;

function serverKey(language: Language, root: string, policy: SandboxPolicy): string {
  return JSON.stringify([language.name, language.commands, language.args, root, serverPolicy(policy) ?? null]);
}

/** What {@link serverFor} found: a client (`started`: just now), or why there is none. */
export type ServerLookup =
  | { client: LanguageClient; started: boolean }
  | { missing: true }
  | { failed: string }
  /** It ended before it answered initialize, a moment ago: not started again yet. */
  | { broken: string };

/**
 * The live server for `language` in `root` under `policy`, started if there is none or it died (then reopening the
 * documents the dead one had open, from disk).
 */
export function serverFor(language: Language, root: string, policy: SandboxPolicy): ServerLookup {
  const key = serverKey(language, root, policy);
  const existing = clients.get(key);
  if (existing && existing.exited === undefined) {
    existing.lastUsed = Date.now();
    return { client: existing, started: false };
  }
  if (existing && !existing.initialized) {
    broken.set(key, { until: Date.now() + BROKEN_PAUSE_MS, why: existing.exited ?? "ended" });
    clients.delete(key);
  }
  const pause = broken.get(key);
  if (pause && Date.now() < pause.until) return { broken: `the ${language.name} language server ${pause.why}` };
  broken.delete(key);
  const executable = findServer(language, root);
  if (!executable) return { missing: true };
  let client: LanguageClient;
  try {
    client = new LanguageClient(language, root, executable, policy);
  } catch (error) {
    return { failed: errorText(error) };
  }
  if (existing?.initialized)
    log.info(`restarting the ${language.name} language server in ${root} (it ${existing.exited})`);
  const reopen = [...(readBefore.get(key) ?? []), ...(existing?.openFiles() ?? [])];
  readBefore.delete(key);
  if (reopen.length > 0) {
    void client.ready.then(
      () => client.reopenFromDisk(reopen),
      () => {},
    );
  }
  clients.set(key, client);
  sweeper ??= setInterval(sweepIdle, 60_000).unref();
  if (!exitHook) {
    exitHook = true;
    process.once("exit", () => {
      for (const live of clients.values()) live.kill();
    });
  }
  return { client, started: true };
}

/**
 * A file the model read: its language's server opens it (now if running, else when it starts), so that a change
 * elsewhere that breaks it is reported. A read never starts a server.
 */
export function noteRead(language: Language, root: string, policy: SandboxPolicy, file: string): void {
  const key = serverKey(language, root, policy);
  const client = clients.get(key);
  if (client && client.exited === undefined) {
    client.lastUsed = Date.now();
    if (!client.isOpen(file))
      void client.ready.then(
        () => client.reopenFromDisk([file]),
        () => {},
      );
    return;
  }
  const files = readBefore.get(key) ?? new Set<string>();
  files.delete(file);
  files.add(file);
  if (files.size > MAX_READ_BEFORE) files.delete(files.values().next().value as string);
  readBefore.set(key, files);
}

/** Stops every language server (shutdown, then exit; killed if it does not go). */
export async function stopLanguageServers(): Promise<void> {
  const all = [...clients.values()];
  clients.clear();
  if (sweeper) clearInterval(sweeper);
  sweeper = undefined;
  await Promise.all(all.map((client) => client.stop().catch(() => client.kill())));
}
