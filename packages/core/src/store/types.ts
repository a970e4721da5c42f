/**
 * The session store's public API: versioned prompts, sessions and their messages, on SQLite or PostgreSQL (one
 * implementation over Kysely, see store.ts). Everything here is dialect-neutral: timestamps are ISO-8601 UTC strings
 * (they sort as text), JSON columns come back parsed.
 *
 * A session's `messages` are its conversation WITHOUT the system prompt (user, assistant and tool messages in order);
 * the rendered system prompt lives on the session row (`systemPrompt`). Archives (the history a compaction or a
 * `/clear` replaced) are sessions too, with `archivedFrom` set to the live session's id; listings leave them out.
 */
import type { ChatMessage, ToolDefinition, ToolOutcome, Usage } from "../messages.js";
import type { ToolDisplay } from "../tools.js";
import type { CheckpointStore } from "./checkpoint-types.js";
import type { EvalStore } from "./eval-types.js";
import type { LeaseStore } from "./lease-types.js";

/** One version of a named prompt template. Versions count from 1 per name; identical content is never stored twice. */
export interface PromptRecord {
  /** `<name>@<version>`, stable across stores (e.g. `system_prompt@3`). */
  id: string;
  name: string;
  version: number;
  /** SHA-256 (hex) of `content`. */
  hash: string;
  content: string;
  createdAt: string;
}

export interface SessionRecord {
  id: string;
  cwd: string;
  title: string | null;
  /** Permission mode (`code`, `ask`, `read-only`). */
  mode: string | null;
  model: string | null;
  /** The prompt version the system prompt was rendered from, and the arguments it was rendered with. */
  promptId: string | null;
  promptArgs: Record<string, unknown> | null;
  /** The rendered system prompt, exactly as sent. */
  systemPrompt: string | null;
  toolDefinitions: ToolDefinition[] | null;
  requestParams: Record<string, unknown> | null;
  /** The session that spawned this one (subagents). */
  parentId: string | null;
  /** Set on archives only: the live session whose earlier history this is. */
  archivedFrom: string | null;
  /** Set on forks: the session whose history this one started as a copy of. */
  forkedFrom: string | null;
  /** Workspace roots besides `cwd` (absolute paths, in the order given; ACP `additionalDirectories`). */
  additionalDirectories: string[];
  createdAt: string;
  updatedAt: string;
}

/** Fields of a new session; `id` is generated (a memorable slug) when omitted. */
export interface NewSession {
  id?: string;
  cwd: string;
  title?: string | null;
  mode?: string | null;
  model?: string | null;
  promptId?: string | null;
  promptArgs?: Record<string, unknown> | null;
  systemPrompt?: string | null;
  toolDefinitions?: ToolDefinition[] | null;
  requestParams?: Record<string, unknown> | null;
  parentId?: string | null;
  /** Workspace roots besides `cwd` (absolute paths); empty or null: none. */
  additionalDirectories?: readonly string[] | null;
}

/** Updatable session fields (`updatedAt` is always bumped). */
export type SessionPatch = Partial<Omit<NewSession, "id">>;

/** A message to append, with the completion's usage on assistant messages and the outcome on tool results. */
export interface MessageInput {
  message: ChatMessage;
  usage?: Usage;
  outcome?: ToolOutcome;
}

export interface StoredMessage {
  /** 0-based position in the session's history. */
  seq: number;
  message: ChatMessage;
  usage?: Usage;
  outcome?: ToolOutcome;
  createdAt: string;
}

/** The display stored with one tool result ({@link Store.loadToolDisplays}). */
export interface StoredToolDisplay {
  seq: number;
  /** The call the result answers (`tool_call_id`). */
  toolCallId: string;
  display: ToolDisplay;
}

/** How one stored tool call ended ({@link Store.loadToolOutcomes}): its error flag, and its display when kept. */
export interface StoredToolOutcome {
  seq: number;
  /** The call the result answers (`tool_call_id`). */
  toolCallId: string;
  isError: boolean;
  /** Absent on results stored before migration 0007. */
  display?: ToolDisplay;
}

export interface ListSessionsOptions {
  /** Only sessions whose cwd equals this path. */
  cwd?: string;
  /** The `nextCursor` of the previous page. */
  cursor?: string;
  /** Page size (default 50, at most 500). */
  limit?: number;
  /** Only children of this session. */
  parentId?: string;
  /** Only sessions no other session spawned (no subagent children): what a user picks to resume. */
  topLevel?: boolean;
  /**
   * Only sessions with something to resume: a title, a stored message or an archive (a session opened and never
   * prompted, as an editor opens one at each start, is left out).
   */
  prompted?: boolean;
  /** Only sessions whose title contains this text (case-insensitive for ASCII letters). */
  titleContains?: string;
  /** Only sessions whose id starts with this text (see `resolveSessionId`). */
  idPrefix?: string;
}

/** Options of {@link Store.loadMessagePage}. */
export interface MessagePageOptions {
  /** The first seq to return (default 0). */
  fromSeq?: number;
  /** At most this many messages (default 200, at most 2000). */
  limit?: number;
}

/** The usage of one LLM response (an assistant message that has it), for charts. */
export interface UsagePoint {
  seq: number;
  usage: Usage;
  createdAt: string;
}

/** Totals of a session over its whole life: its current history plus its archives. */
export interface SessionStats {
  /** Messages in the current history. */
  messages: number;
  /**
   * User messages (the tasks asked), archives included; a prompt a compaction kept in the new history counts again.
   */
  prompts: number;
  /** Assistant messages with a usage (LLM responses), archives included. */
  requests: number;
  promptTokens: number;
  completionTokens: number;
  /** Of `promptTokens`, those the provider reported as read from its prompt cache. */
  cachedTokens: number;
  /** Archives (compactions and clears). */
  archives: number;
}

export interface SessionPage {
  /** Most recently updated first. */
  sessions: SessionRecord[];
  /** Present when there are more sessions. */
  nextCursor?: string;
}

/** Options of `forkSession`. */
export interface ForkOptions {
  /** The fork's working directory (default: the source's). */
  cwd?: string;
  /** The fork's workspace roots besides its cwd (default: the source's). */
  additionalDirectories?: readonly string[];
}

/** What `replaceMessages` does besides swapping the history. */
export interface ReplaceOptions {
  /** Session fields to update at the same time (e.g. a re-rendered system prompt). */
  patch?: SessionPatch;
  /**
   * The seq from which the session's checkpoints go to the archive with the history (default 0: all of them, as
   * `/clear` empties the history). A rewind keeps the messages before a seq, so it keeps their
   * checkpoints too.
   */
  checkpointsFrom?: number;
  /**
   * What replaced the history, kept in the archive's id (`…~clear-…`, `…~rewind-…`; a compaction's is `…~archive-…`)
   * so the viewer can say which it was: a `/clear` and a rewind to the first message both keep nothing.
   */
  kind?: "clear" | "rewind";
  /**
   * Checkpoints that stay with the new history, renumbered (a compaction keeps the first and the last user message):
   * each one whose seq is in `[from, to)` moves to `seq` and belongs to the user message there (`promptHash`); the
   * archive gets a copy of it as it was. The others go to the archive as `checkpointsFrom` says.
   */
  keepCheckpoints?: readonly CheckpointMove[];
}

/** A span of turns whose checkpoints stay with the session, under the user message at `seq` of the new history. */
export interface CheckpointMove {
  from: number;
  to: number;
  seq: number;
  promptHash: string;
}

export type StoreKind = "sqlite" | "postgres";

/**
 * The store. Every write is one transaction. Methods reject with {@link StoreError} on a database failure and with
 * {@link SessionNotFoundError} when a session id does not exist (where stated).
 */
export interface Store {
  readonly kind: StoreKind;
  /** Where it is, for messages (a file path, or the PG URL without its password). */
  readonly location: string;

  /**
   * The prompt version with this name and content: the existing one when the content was stored before under this
   * name, else a new version (previous max + 1).
   */
  getOrCreatePrompt(name: string, content: string): Promise<PromptRecord>;
  getPrompt(id: string): Promise<PromptRecord | undefined>;
  /** Every version of a name, oldest first. */
  listPromptVersions(name: string): Promise<PromptRecord[]>;

  /** Creates a session (a fresh slug id unless given; rejects if a given id exists). */
  createSession(init: NewSession): Promise<SessionRecord>;
  getSession(id: string): Promise<SessionRecord | undefined>;
  /** Updates fields and bumps `updatedAt`. Throws SessionNotFoundError. */
  updateSession(id: string, patch: SessionPatch): Promise<SessionRecord>;
  /** Live sessions (no archives), most recently updated first, paginated by an opaque cursor. */
  listSessions(options?: ListSessionsOptions): Promise<SessionPage>;
  /** Deletes a session, its messages and its archives. Returns false when it did not exist. */
  deleteSession(id: string): Promise<boolean>;

  /** Appends messages at the end of the history (one transaction), bumps `updatedAt`; returns their seqs. */
  appendMessages(sessionId: string, messages: readonly MessageInput[]): Promise<number[]>;
  /** The whole history in order. Unknown session: empty. */
  loadMessages(sessionId: string): Promise<StoredMessage[]>;
  countMessages(sessionId: string): Promise<number>;
  /**
   * The displays stored with the tool results of the current history, in seq order: what a replay shows of each call.
   * Results stored before migration 0007 (and other messages) have none.
   */
  loadToolDisplays(sessionId: string): Promise<StoredToolDisplay[]>;
  /**
   * How each tool call of the current history ended, in seq order: its error flag and its display (when kept), for a
   * replay that shows failures as they were. Results stored before outcomes were kept are left out.
   */
  loadToolOutcomes(sessionId: string): Promise<StoredToolOutcome[]>;
  /**
   * Compaction's and `/clear`'s id swap, atomically: the current row and history move to a new archive session
   * (`archivedFrom` = `sessionId`), and `sessionId` keeps its id with `messages` as its new history (and `patch`
   * applied). Returns the archive's id. Throws SessionNotFoundError.
   */
  replaceMessages(sessionId: string, messages: readonly MessageInput[], options?: ReplaceOptions): Promise<string>;
  /** The archives of a session, oldest first. */
  listArchives(sessionId: string): Promise<SessionRecord[]>;
  /**
   * A new session (fresh id) that starts as a copy of `sessionId` as stored now, in one transaction: its settings
   * (mode, model, title, the prompt version and arguments, the rendered system prompt, tool definitions, request
   * params, parent) and its whole current history with usage; not its archives. `forkedFrom` links it to the
   * source. Throws SessionNotFoundError for an unknown session or an archive.
   */
  forkSession(sessionId: string, options?: ForkOptions): Promise<SessionRecord>;

  /** A slice of the history in seq order (keyset: `seq >= fromSeq`), for reading long sessions piece by piece. */
  loadMessagePage(sessionId: string, options?: MessagePageOptions): Promise<StoredMessage[]>;
  /** The usage of every response in this session's current history, in seq order (no message bodies are read). */
  listUsage(sessionId: string): Promise<UsagePoint[]>;
  /** Totals per session id (archives folded into their session); ids that do not exist are absent. */
  sessionStats(ids: readonly string[]): Promise<Map<string, SessionStats>>;

  /** `crow eval`'s runs and trials. */
  readonly evals: EvalStore;
  /** Workspace checkpoint references (`/rewind`). */
  readonly checkpoints: CheckpointStore;
  /** Which live process holds each open session (one live owner per session). */
  readonly leases: LeaseStore;

  /** Closes the connection(s). */
  close(): Promise<void>;
}

/** A database failure, with the store location in the message. */
export class StoreError extends Error {
  override name = "StoreError";
}

/**
 * The SQLite database's file or directory cannot be made or opened (no permission, read-only file system, a path
 * through a file): a setup problem, fixed by pointing `CROW_HOME` or `CROW_DB_URI` elsewhere, which the message says.
 */
export class StoreLocationError extends StoreError {
  override name = "StoreLocationError";
  /**
   * @param problem what failed, without the advice (`crow doctor` shows the advice on its own line)
   * @param fix what to do about it; the message is `problem. fix`
   */
  constructor(
    readonly problem: string,
    readonly fix: string,
    options?: ErrorOptions,
  ) {
    super(`${problem}. ${fix}`, options);
  }
}

/**
 * No SQLite driver loads: Node has no `node:sqlite` (Node 20) and better-sqlite3, an optional dependency compiled at
 * install, is missing (its build failed: no python3, make, compiler or Node headers, named by driver-build.ts) or its
 * addon does not load. A setup problem, fixed by a newer Node or by reinstalling with what the build lacked, which
 * {@link fix} says.
 */
export class StoreDriverError extends StoreError {
  override name = "StoreDriverError";
  /** @param problem what is missing, @param fix what to do; the message is `problem. fix` */
  constructor(
    readonly problem: string,
    readonly fix: string,
    options?: ErrorOptions,
  ) {
    super(`${problem}. ${fix}`, options);
  }
}

export class SessionNotFoundError extends StoreError {
  override name = "SessionNotFoundError";
  constructor(readonly sessionId: string) {
    super(`session not found: ${sessionId}`);
  }
}

/** A `db_uri` that names no usable database; the message says which forms are accepted. */
export class DbUriError extends Error {
  override name = "DbUriError";
}
