/** The public shapes of workspace checkpoints and `/rewind` (SDK `session.rewind`, ACP `_crow/rewind`). */
import type { CheckpointFile } from "../store/checkpoint-types.js";

/** Settings (config.yaml `checkpoints:`). */
export interface CheckpointSettings {
  /** Take checkpoints (default true). Rewinding the conversation works either way. */
  enabled?: boolean;
  /** Files larger than this are not captured, and listed (default 10). */
  maxFileMb?: number;
  /** Checkpoints older than this many days are garbage-collected (default 30). */
  keepDays?: number;
  /**
   * Directories the model's commands may write besides each session's own (the sandbox's `writable`): a git found on
   * PATH inside one is never run. Set by the agent, not config.yaml.
   */
  untrustedDirs?: readonly string[];
  /** Files never captured, by path or inode (Crow's `.env` and config.yaml). Set by the agent, not config.yaml. */
  secretFiles?: readonly string[];
}

/** One user message a session can be rewound to (to just before it). */
export interface RewindPoint {
  /** The message's seq in the history (what `RewindRequest.seq` names). */
  seq: number;
  /** 1-based number among the session's user messages (what `/rewind N` names). */
  number: number;
  /** The message's text, shortened to one line. */
  text: string;
  /** What the agent's turn after this message changed in the workspace (empty: nothing, or no checkpoint). */
  files: CheckpointFile[];
}

/** What to put back: the workspace files, the conversation, or both (default). */
export type RewindScope = "files" | "conversation" | "both";

export interface RewindRequest {
  /** The seq of the user message to go back to just before. */
  seq: number;
  scope?: RewindScope;
  /**
   * Also overwrite paths someone else changed after the agent's last turn touching them, or between two of the
   * agent's turns since the message (default false: they are listed in `conflicts` and left alone).
   */
  overwrite?: boolean;
  /** Only say what would happen. */
  dryRun?: boolean;
}

export interface RewindResult {
  scope: RewindScope;
  seq: number;
  dryRun: boolean;
  /** Paths put back as they were before the message (or deleted, when they did not exist then). */
  restored: string[];
  /** Paths changed since by someone other than the agent, left alone (not in `restored`). */
  conflicts: string[];
  /** Paths over the size cap: never captured, never restored. */
  skipped: string[];
  /** Why the files were not restored at all (e.g. the checkpoints are on another host). */
  filesRefused?: string;
  /** The archive that holds the conversation from the message on. */
  archiveId?: string;
  /** Messages left in the conversation. */
  messagesKept: number;
  /** What happened, for people. */
  message: string;
}
