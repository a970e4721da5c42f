/** A run as the store keeps it: the settings `--resume` and the queue workers run it again by. */
import type { EvalRunRecord, Store } from "@crow/core";
import { type EvalTask, loadSuite } from "./suite.js";
import type { Variant } from "./variants.js";

/**
 * How a run is described in the store, so `--resume` (and a worker) can run it again. A type rather than an
 * interface: it is the record's JSON object (`EvalRunRecord.config`), which a type alias is assignable to.
 */
export type StoredRunConfig = {
  tasks: string[];
  variants: Array<{ label: string; model?: string; promptId?: string; oracle?: boolean }>;
  trials: number;
};

/** Why `--queue` and `crow eval worker` refuse a SQLite store. */
export const QUEUE_NEEDS_POSTGRES =
  "the eval queue needs a PostgreSQL store: set db_uri in config.yaml (or CROW_DB_URI) to postgres://… for every host; without --queue, trials run in this process on the local store";

/** Bad input to `crow eval`: the message says what was wrong; exit code 2. */
export class EvalUsageError extends Error {
  override name = "EvalUsageError";
}

/**
 * `run`'s stored settings, checked: the store holds JSON any version of Crow (or a hand-edited row) wrote, so a
 * damaged one is refused here, naming the run, rather than failing deep inside a resumed run or a worker.
 */
export function storedRunConfig(run: EvalRunRecord): StoredRunConfig {
  const { tasks, variants, trials } = run.config;
  const optional = (value: unknown, type: "string" | "boolean") => value === undefined || typeof value === type;
  const variant = (v: unknown): boolean => {
    if (typeof v !== "object" || v === null) return false;
    const { label, model, promptId, oracle } = v as Record<string, unknown>;
    return (
      typeof label === "string" &&
      optional(model, "string") &&
      optional(promptId, "string") &&
      optional(oracle, "boolean")
    );
  };
  if (
    !Array.isArray(tasks) ||
    !tasks.every((t) => typeof t === "string") ||
    !Array.isArray(variants) ||
    !variants.every(variant) ||
    !Number.isSafeInteger(trials) ||
    (trials as number) < 1
  ) {
    throw new EvalUsageError(`run ${run.id}: its stored settings are damaged (tasks, variants or trials)`);
  }
  return { tasks, variants, trials: trials as number };
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
  const names = storedRunConfig(run).tasks;
  const tasks = loadSuite(run.suite);
  const missing = names.filter((name) => !tasks.some((t) => t.name === name));
  if (missing.length > 0)
    throw new EvalUsageError(`run ${run.id}: tasks gone from ${run.suite}: ${missing.join(", ")}`);
  return tasks.filter((t) => names.includes(t.name));
}
