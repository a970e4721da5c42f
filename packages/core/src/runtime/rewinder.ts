/**
 * A session's `rewind` and `rewindPoints` (checkpoints/rewind.ts does the work): the runtime's part is to read the
 * checkpoints from its store and, after a conversation rewind, to forget the prompt size of the cut history (a
 * compaction rule, compaction/policy.ts) and put back the plan as the kept history had it.
 */

import type { PlanEntry } from "../api/types.js";
import type { ShadowRepos } from "../checkpoints/repos.js";
import { rewindPoints, rewindSession } from "../checkpoints/rewind.js";
import type { RewindPoint, RewindRequest, RewindResult } from "../checkpoints/types.js";
import type { Compaction } from "../compaction/index.js";
import { planFromHistory } from "../extensions/todo.js";
import type { ChatMessage } from "../messages.js";
import type { Store } from "../store/types.js";

/** What a rewind reads and changes of the live session. */
export interface RewindableSession {
  readonly id: string;
  readonly history: ChatMessage[];
  readonly plan: readonly PlanEntry[];
  readonly compaction: Pick<Compaction, "forget">;
  setPlan(entries: readonly PlanEntry[]): void;
}

export interface Rewinder {
  points(session: RewindableSession): Promise<RewindPoint[]>;
  rewind(session: RewindableSession, request: RewindRequest): Promise<RewindResult>;
}

/** The rewinder of a runtime: its store (none: the conversation only, in memory) and shadow repositories. */
export function makeRewinder(store: Store | undefined, repos: ShadowRepos | undefined): Rewinder {
  return {
    async points(session) {
      return rewindPoints(session.history, store ? await store.checkpoints.list(session.id) : []);
    },
    async rewind(session, request) {
      const result = await rewindSession(session, { store, repos }, request);
      if (!result.dryRun && result.scope !== "files") {
        session.compaction.forget();
        const plan = planFromHistory(session.history);
        if (plan.length > 0 || session.plan.length > 0) session.setPlan(plan);
      }
      return result;
    },
  };
}
