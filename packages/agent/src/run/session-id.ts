/**
 * `crow run -s` with part of an id: the store says which stored session a unique beginning names (the agent's
 * `session/load` takes whole ids only, as ACP clients expect).
 */

import { UsageError } from "../base/exit-codes.js";
import type { AgentConfig } from "../config/index.js";

/**
 * The whole id of the session `typed` begins, or undefined when none does. Throws `UsageError` listing the
 * candidates when several do.
 */
export async function resolveStoredSession(config: AgentConfig, typed: string): Promise<string | undefined> {
  const [{ openStore }, { AmbiguousSessionIdError, resolveSessionId }] = await Promise.all([
    import("@crow/core"),
    import("@crow/core/internal"),
  ]);
  const store = await openStore(config.dbUri, { baseDir: config.home });
  try {
    return await resolveSessionId(store, typed);
  } catch (error) {
    if (error instanceof AmbiguousSessionIdError) throw new UsageError(error.message);
    throw error;
  } finally {
    await store.close();
  }
}
