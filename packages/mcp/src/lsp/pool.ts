/**
 * The language servers of this crow-mcp process: one per language, workspace and confinement, shared by every
 * session that has all three alike, started on the first change of its language, started again after it died, and
 * stopped with the toolserver ({@link stopLanguageServers}; at exit, killed).
 */
import { log } from "../log.js";
import type { SandboxPolicy } from "../sandbox/policy.js";
import { LanguageClient } from "./client.js";
import { findServer } from "./find.js";
import type { Language } from "./languages.js";
import { serverPolicy } from "./launch.js";

const clients = new Map<string, LanguageClient>();
let exitHook = false;

function keyOf(language: Language, root: string, policy: SandboxPolicy): string {
  return JSON.stringify([language.name, language.commands, language.args, root, serverPolicy(policy) ?? null]);
}

/** What {@link serverFor} found: a client (`started`: just now), or why there is none. */
export type ServerLookup = { client: LanguageClient; started: boolean } | { missing: true } | { failed: string };

/**
 * The live server for `language` in `root` under `policy`, started if there is none or it died (then reopening the
 * documents the dead one had open, from disk).
 */
export function serverFor(language: Language, root: string, policy: SandboxPolicy): ServerLookup {
  const key = keyOf(language, root, policy);
  const existing = clients.get(key);
  if (existing && existing.exited === undefined) return { client: existing, started: false };
  const executable = findServer(language, root);
  if (!executable) return { missing: true };
  let client: LanguageClient;
  try {
    client = new LanguageClient(language, root, executable, policy);
  } catch (error) {
    return { failed: (error as Error).message };
  }
  if (existing) {
    log.info(`restarting the ${language.name} language server in ${root} (it ${existing.exited})`);
    const reopen = existing.openFiles();
    void client.ready.then(
      () => client.reopenFromDisk(reopen),
      () => {},
    );
  }
  clients.set(key, client);
  if (!exitHook) {
    exitHook = true;
    process.once("exit", () => {
      for (const live of clients.values()) live.kill();
    });
  }
  return { client, started: true };
}

/** The live (not exited) servers, for a read to open a file in. */
export function liveServer(language: Language, root: string, policy: SandboxPolicy): LanguageClient | undefined {
  const client = clients.get(keyOf(language, root, policy));
  return client && client.exited === undefined ? client : undefined;
}

/** Stops every language server (shutdown, then exit; killed if it does not go). */
export async function stopLanguageServers(): Promise<void> {
  const all = [...clients.values()];
  clients.clear();
  await Promise.all(all.map((client) => client.stop().catch(() => client.kill())));
}
