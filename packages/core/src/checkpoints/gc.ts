/**
 * Garbage collection of checkpoints: rows older than `keep_days` are deleted, then in each shadow repository of this
 * host the refs no checkpoint names any more are dropped and `git gc --prune=now` removes what only they kept. The
 * git part is slow on a big workspace (seconds), so it runs in the background, at most once a day per Crow home.
 */
import { readdir, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { errorText } from "../error-text.js";
import type { Store } from "../store/types.js";
import { type ShadowGuard, ShadowRepo } from "./shadow-repo.js";

const DAY_MS = 24 * 60 * 60 * 1000;

export interface GcReport {
  rowsDeleted: number;
  refsDropped: number;
  repositories: number;
}

/**
 * Collects now (tests and the daily run call this). A snapshot younger than `minAgeMs` is kept whatever the store
 * says: another process may have taken it and not yet stored its checkpoint.
 */
export async function collectCheckpoints(
  store: Store,
  home: string,
  host: string,
  keepDays: number,
  minAgeMs = 60 * 60 * 1000,
  guard: ShadowGuard = {},
): Promise<GcReport> {
  const cutoff = new Date(Date.now() - keepDays * DAY_MS).toISOString();
  const rowsDeleted = await store.checkpoints.deleteOlderThan(cutoff);
  const named = await store.checkpoints.commitsOf(host);
  const dir = path.join(home, "checkpoints");
  let entries: string[] = [];
  try {
    entries = (await readdir(dir)).filter((name) => name.endsWith(".git"));
  } catch {
    // No checkpoint was ever taken here.
  }
  let refsDropped = 0;
  for (const name of entries) {
    // The work tree does not matter for ref and object maintenance.
    const repo = new ShadowRepo(path.join(dir, name), dir, 0, undefined, guard);
    const youngest = Date.now() - minAgeMs;
    const stale = (await repo.keptCommits())
      .filter(({ commit, time }) => !named.has(commit) && time <= youngest)
      .map(({ commit }) => commit);
    if (stale.length > 0)
      await repo.forget(stale, minAgeMs === 0 ? "now" : `${Math.ceil(minAgeMs / 1000)}.seconds.ago`);
    refsDropped += stale.length;
  }
  return { rowsDeleted, refsDropped, repositories: entries.length };
}

/** Runs {@link collectCheckpoints} when the last run is more than a day old; never rejects. */
export async function collectCheckpointsDaily(
  store: Store,
  home: string,
  host: string,
  keepDays: number,
  log: (message: string) => void,
  guard: ShadowGuard = {},
): Promise<void> {
  const marker = path.join(home, "checkpoints", ".last-gc");
  try {
    const last = await stat(marker).then(
      (info) => info.mtimeMs,
      () => 0,
    );
    if (Date.now() - last < DAY_MS) return;
    await writeFile(marker, "").catch(() => undefined);
    await collectCheckpoints(store, home, host, keepDays, undefined, guard);
  } catch (error) {
    log(`checkpoint garbage collection failed: ${errorText(error)}`);
  }
}
