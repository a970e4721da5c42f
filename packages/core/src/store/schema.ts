/**
 * The tables as Kysely sees them. Column types are the same on SQLite and PostgreSQL: TEXT for strings, ISO-8601
 * timestamps and JSON (parsed in store.ts), INTEGER for numbers (PG `integer` comes back as a number, unlike `bigint`).
 */
export interface PromptsTable {
  id: string;
  name: string;
  version: number;
  hash: string;
  content: string;
  created_at: string;
}

export interface SessionsTable {
  id: string;
  cwd: string;
  title: string | null;
  mode: string | null;
  model: string | null;
  prompt_id: string | null;
  /** JSON. */
  prompt_args: string | null;
  system_prompt: string | null;
  /** JSON. */
  tool_definitions: string | null;
  /** JSON. */
  request_params: string | null;
  parent_id: string | null;
  archived_from: string | null;
  /** The session this one was forked from (migration 0002). */
  forked_from: string | null;
  /** JSON list of absolute paths: workspace roots besides `cwd` (migration 0005); null: none. */
  additional_directories: string | null;
  created_at: string;
  updated_at: string;
}

export interface MessagesTable {
  session_id: string;
  seq: number;
  role: string;
  /** The whole OpenAI message, JSON. */
  data: string;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  total_tokens: number | null;
  /** The full usage object (cached/reasoning tokens), JSON; null on non-assistant rows. */
  usage: string | null;
  /** Tool results: 1 when the result is an error, else 0; null on other rows and rows older than migration 0003. */
  is_error: number | null;
  /** Tool results: how long the call ran, in ms; null as `is_error`. */
  duration_ms: number | null;
  /**
   * Tool results: the call's display as the host showed it (`ToolDisplay`), JSON; null on other rows and rows older
   * than migration 0007. Never sent to the model.
   */
  display: string | null;
  created_at: string;
}

/** One `crow eval run` (migration 0003). */
export interface EvalRunsTable {
  id: string;
  name: string | null;
  suite: string;
  /** JSON: the run's settings (variants, trials, tasks, oracle…), what `--resume` and the workers run by. */
  config: string;
  created_at: string;
}

/** One finished trial of a run (migration 0003); unique per (run, task, variant, trial): recorded once. */
export interface EvalTrialsTable {
  run_id: string;
  task: string;
  variant: string;
  trial: number;
  session_id: string | null;
  reward: number;
  passed: number;
  stop_reason: string | null;
  wall_ms: number;
  requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens: number;
  /** In the model's price currency; null when the model has no price. */
  cost: number | null;
  tool_calls: number;
  tool_errors: number;
  error: string | null;
  finished_at: string;
  /** JSON {@link EvalTrialDetails} (migration 0008); null before. */
  details: string | null;
}

/** A turn's workspace checkpoint (migration 0005; see checkpoints.ts). */
export interface CheckpointsTable {
  id: string;
  session_id: string;
  /** The seq of the turn's user message. */
  seq: number;
  prompt_hash: string;
  workspace: string;
  host: string;
  before_commit: string;
  after_commit: string | null;
  /** JSON: the turn's changed paths with their status; null until the turn ended. */
  files: string | null;
  /** JSON: paths over the size cap. */
  skipped: string;
  created_at: string;
}

/** Which live process holds a session open (migration 0009; see lease-types.ts). */
export interface SessionLeasesTable {
  session_id: string;
  owner: string;
  host: string;
  pid: number;
  agent: string;
  /** ISO-8601 UTC. */
  expires_at: string;
  acquired_at: string;
}

/** Kysely's own bookkeeping tables (`crow_migrations`, `crow_migration_lock`) are not listed. */
export interface Database {
  prompts: PromptsTable;
  sessions: SessionsTable;
  messages: MessagesTable;
  eval_runs: EvalRunsTable;
  eval_trials: EvalTrialsTable;
  checkpoints: CheckpointsTable;
  session_leases: SessionLeasesTable;
}
