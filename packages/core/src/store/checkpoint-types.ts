/**
 * Workspace checkpoints as the store keeps them (checkpoints.ts): which snapshot of the shadow repository a turn
 * started from and ended with. The snapshots themselves live in a git repository local to the host that took them
 * (`<crow home>/checkpoints/`); only these references are in the SQL store, with the host's name so another host
 * sharing a PostgreSQL store knows it cannot restore them.
 */

/** One changed path of a turn (`git diff --name-status`: A added, M modified, D deleted, T type change). */
export interface CheckpointFile {
  path: string;
  status: string;
}

/** The checkpoint of one turn: taken before the turn's first change, completed when the turn ends. */
export interface CheckpointRecord {
  id: string;
  sessionId: string;
  /** The seq of the turn's user message in the session's history. */
  seq: number;
  /** SHA-256 (hex, shortened) of the user message's text: a seq reused after a compaction does not match. */
  promptHash: string;
  /** The workspace (absolute) the snapshots are of. */
  workspace: string;
  /** The host whose shadow repository holds the snapshots. */
  host: string;
  /** The snapshot taken before the turn's first change. */
  before: string;
  /** The snapshot taken when the turn ended (null while it runs, or when the process died during it). */
  after: string | null;
  /** What the turn changed (null until it ended). */
  files: CheckpointFile[] | null;
  /** Paths over the size cap, left out of the snapshots (and so never restored). */
  skipped: string[];
  createdAt: string;
}

export type NewCheckpoint = Omit<CheckpointRecord, "id" | "after" | "files" | "createdAt">;

/** The checkpoint references (`Store.checkpoints`). */
export interface CheckpointStore {
  /** Records a turn's checkpoint; returns it with its id. */
  add(checkpoint: NewCheckpoint): Promise<CheckpointRecord>;
  /** Completes a checkpoint when its turn ends. */
  finish(id: string, after: string, files: readonly CheckpointFile[], skipped: readonly string[]): Promise<void>;
  /** A session's checkpoints in turn order (seq, then time). */
  list(sessionId: string): Promise<CheckpointRecord[]>;
  /** Deletes checkpoints created before `before` (ISO time); returns how many. */
  deleteOlderThan(before: string): Promise<number>;
  /** The snapshot commits still named by a checkpoint of `host` (garbage collection keeps these). */
  commitsOf(host: string): Promise<Set<string>>;
}
