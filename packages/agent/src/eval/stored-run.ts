/** A run as the store keeps it: the settings `--resume` and the queue workers run it again by. */
import type { EvalRunRecord, Store } from "@crow/core";
import { type EvalTask, loadSuite } from "./suite.js";
import type { Variant } from "./variants.js";

/** How a run is described in the store, so `--resume` (and a worker) can run it again. */
export interface StoredRunConfig {
  tasks: string[];
  variants: Array<{ label: string; model?: string; promptId?: string; oracle?: boolean }>;
  trials: number;
}

/** Why `--queue` and `crow eval worker` refuse a SQLite store. */
export const QUEUE_NEEDS_POSTGRES =
  "the eval queue needs a PostgreSQL store: set db_uri in config.yaml (or CROW_DB_URI) to postgres://… for every host; without --queue, trials run in this process on the local store";

/** Bad input to `crow eval`: the message says what was wrong; exit code 2. */
export class EvalUsageError extends Error {
  override name = "EvalUsageError";
}

/** The variants of a stored run, with their prompt texts read back from the store. */
export async function storedVariants(store: Store, config: StoredRunConfig): Promise<Variant[]> {
  const variants: Variant[] = [];
  for (const v of config.variants) {
    const prompt = v.promptId ? await store.getPrompt(v.promptId) : undefined;
    if (v.promptId && !prompt) throw new EvalUsageError(`prompt version ${v.promptId} is no longer in the store`);
    variants.push({
      label: v.label,
      ...(v.model ? { model: v.model } : {}),
      ...(prompt ? { prompt: { id: prompt.id, content: prompt.content } } : {}),
      ...(v.oracle ? { oracle: true } : {}),
    });
  }
  return variants;
}

/** The tasks of a stored run, read from its suite again. */
export function storedTasks(run: EvalRunRecord): EvalTask[] {
  const names = (run.config as unknown as StoredRunConfig).tasks;
  const tasks = loadSuite(run.suite);
  const missing = names.filter((name) => !tasks.some((t) => t.name === name));
  if (missing.length > 0)
    throw new EvalUsageError(`run ${run.id}: tasks gone from ${run.suite}: ${missing.join(", ")}`);
  return tasks.filter((t) => names.includes(t.name));
}
