/**
 * The runtime library's public types (the SDK's too): `createRuntime(options)` (options.ts) → {@link Crow} → {@link CrowSession} → `prompt()` → {@link PromptRun}.
 * The same runtime serves `crow acp` (the ACP layer translates its events) and library users (no ACP at all).
 */
import type { RewindPoint, RewindRequest, RewindResult } from "../checkpoints/types.js";
import type { CompactionEvent, CompactionResult } from "../compaction/compact-history.js";
import type { StopReason } from "../hooks/types.js";
import type { LlmError } from "../llm/types.js";
import type { LoopEvent } from "../loop/types.js";
import type { ChatMessage, ContentPart, Usage } from "../messages.js";
import type { SessionRecord, Store } from "../store/types.js";
import type { ExternalSkills, ToolSet } from "../tools.js";
import type { PermissionAnswer, PermissionMode, PermissionRequest } from "./permissions.js";
import type { UserAnswer, UserAsker, UserQuestion } from "./user-question.js";

type Awaitable<T> = T | Promise<T>;

/** What a {@link ToolSetFactory} is told about the session it serves. */
export interface ToolSetRequest {
  sessionId: string;
  /** Absolute working directory. */
  cwd: string;
  /** The session's workspace roots besides `cwd` (the sandbox makes them writable like it). */
  additionalDirectories?: readonly string[];
  /** The parent session of a subagent. */
  parentId?: string;
  /** The session's current mode (it can change while the session lives; the sandbox follows it). */
  mode?: () => PermissionMode;
  /** Asks the session's user (ACP `session/request_permission`), e.g. to run a blocked command outside the sandbox. */
  askPermission?: (request: PermissionRequest) => Promise<PermissionAnswer>;
  /** Puts a tool server's question to the session's user (see `CrowSession.askUser`). */
  askUser?: (question: UserQuestion) => Promise<UserAnswer>;
  /** A tool server's URL question is done (see `CrowSession.completeUserQuestion`). */
  completeUserQuestion?: (id: string) => void;
}

/** Makes one session's external tool set (called when the session opens; the agent's makes its MCP router). */
export type ToolSetFactory = (request: ToolSetRequest) => Awaitable<ToolSet>;

/** A model the runtime knows by name (the name is what sessions store and requests carry). */
export interface ModelInfo {
  name: string;
  /** The id sent to the provider (default: `name`). */
  id?: string;
  /** A provider registered by an extension (`registerProvider`); else `RuntimeOptions.llm` serves the model. */
  provider?: string;
  /** Context window in tokens (compaction starts at 80 % of it unless `compactionThreshold` says otherwise). */
  contextWindow?: number;
}

/** The names a system prompt gives the workspace and the root of its tree (see `NewSessionOptions.promptPaths`). */
export interface PromptPaths {
  /** The template's `workspace`: where relative paths start. */
  workspace: string;
  /** The first line of the tree (the directory `cwd` is, as the tools see it). */
  treeRoot: string;
}

/** Options of `Crow.newSession`. */
export interface NewSessionOptions {
  /** Absolute working directory. */
  cwd: string;
  /** More workspace roots (absolute paths of existing directories; rejects with InvalidDirectoryError otherwise). */
  additionalDirectories?: readonly string[];
  mode?: PermissionMode;
  model?: string;
  /** The session that spawned this one (subagents): stored as the parent link. */
  parentId?: string;
  /** This session's tools instead of the runtime's default set (or `false` for none besides extensions'). */
  tools?: ToolSetFactory | ToolSet | false;
  /** This session's permission asker (the ACP layer asks its client). */
  askPermission?: (request: PermissionRequest) => Promise<PermissionAnswer>;
  /** Who puts questions to this session's user (the ACP layer, when its client can show them). */
  askUser?: UserAsker;
  /** A fixed system prompt for this session. */
  systemPrompt?: string;
  /**
   * How the rendered system prompt names the session's paths when its tools see them elsewhere than the host (an
   * eval trial: the workspace is `/app` or the image's WORKDIR, the tree's root `/app`, as in Harbor's container).
   * The tree and AGENTS.md are still read from `cwd`; the stored prompt arguments carry these names. Default: `cwd`.
   */
  promptPaths?: PromptPaths;
}

/** Options of `Crow.loadSession`. */
export interface LoadSessionOptions {
  /** Where the project is now (default: the stored cwd); a new cwd is stored. */
  cwd?: string;
  /** The workspace roots besides cwd from now on, stored (default: the stored ones); checked as in `newSession`. */
  additionalDirectories?: readonly string[];
  tools?: ToolSetFactory | ToolSet | false;
  askPermission?: (request: PermissionRequest) => Promise<PermissionAnswer>;
  askUser?: UserAsker;
  /**
   * Take the session over from another live process that has it open (its lease; without this the load is refused
   * with a `SessionLeaseError` saying where it is open). That process stops running it.
   */
  takeOver?: boolean;
}

/**
 * One entry of a session's plan (the `todo` tool's list): exactly the fields of an ACP plan entry, so clients show
 * it as their checklist.
 */
export interface PlanEntry {
  /** What the step is, in a short sentence. */
  content: string;
  status: "pending" | "in_progress" | "completed";
  priority: "high" | "medium" | "low";
}

/**
 * Events of a session outside the loop's own: compaction progress, the title, notices from extensions, mode and
 * model changes, the plan (always the whole list: it replaces the previous one). Delivered to `CrowSession.subscribe`
 * listeners at any time, and inside a prompt's iterable while a turn runs.
 */
export type SessionEvent =
  | CompactionEvent
  | { type: "title"; title: string; updatedAt: string }
  | { type: "notice"; level: "info" | "warning" | "error"; message: string }
  | { type: "mode"; mode: PermissionMode }
  | { type: "model"; model: string }
  /** The reasoning effort sent with every request (`reasoning_effort`), or null: none sent (the provider's default). */
  | { type: "reasoning_effort"; effort: string | null }
  | { type: "plan"; entries: PlanEntry[] };

/** What `prompt()` yields, in order: the loop's events and the session's events of the turn. */
export type CrowEvent = LoopEvent | SessionEvent;

/** What became of a steer ({@link CrowSession.steer}). */
export type SteerOutcome = "injected" | "idle";

/** How a prompt turn ended. */
export interface PromptResult {
  stopReason: StopReason;
  /** The final answer: the text of the turn's last assistant message with text ("" when none). */
  text: string;
  /** Messages appended by the turn (the user message first). */
  messages: ChatMessage[];
  /** Usage summed over the turn's requests. */
  usage?: Usage;
  /** The last request's usage (its prompt size). */
  lastUsage?: Usage;
  /** With stopReason `error`: the provider failure. */
  error?: LlmError;
}

/**
 * One running prompt turn: a view of the session's event stream while the turn runs. Iterate it for the events
 * (optional: the turn runs whether or not anyone iterates; the turn starts after `prompt()` returns, so iterating at
 * once sees every event, and an iteration started later sees those from then on), and await `result` for the outcome. `result` rejects only when the turn could not start (the session
 * is busy or has no model); provider failures resolve with `stopReason: "error"`.
 */
/**
 * One turn: iterate it once for the turn's events, await `result` for its outcome. It keeps the turn's events from
 * `prompt()` on until they are read, so an iteration started late (after an `await`, after `result` settled) still
 * gets every event of the turn in order, then the live ones. The one iterator lets go of each event as it reads it;
 * a run nobody iterates holds its turn's events until the run object is dropped. A second iteration throws
 * `RunIterationError` (read a turn twice through `CrowSession.subscribe` or `onEvent`).
 */
export interface PromptRun extends AsyncIterable<CrowEvent> {
  readonly result: Promise<PromptResult>;
  /** Cancels the turn (it then ends `cancelled`); does nothing once the turn ended. */
  cancel(): void;
}

/** Options of one prompt. */
export interface PromptOptions {
  /** Cancels the turn. */
  signal?: AbortSignal;
  /** Gets every event of this turn synchronously, in order, as it happens (a subscription for the turn's length). */
  onEvent?: (event: CrowEvent) => void;
  /** The prompt as the host received it (JSON), stored with the user message as `original`; not sent to the model. */
  original?: unknown;
  /**
   * Whether the run keeps the turn's events for its iterator (default true: from `prompt()` until they are read, or
   * until the run is dropped if nobody iterates). `false` for a host that reads the session's stream (`subscribe`,
   * `onEvent`) and only awaits `result`: the run keeps nothing, and iterating it throws `RunIterationError`.
   */
  events?: boolean;
}

/** A slash command as advertised (`available_commands_update`). */
export interface CommandInfo {
  name: string;
  description: string;
  /** Shown as the input hint (`/name <hint>`), when the command takes arguments. */
  hint?: string;
  /**
   * A prompt command (from `registerSessionCommands`, e.g. a skill): `/name args` is sent to the model as the user's
   * prompt, and the extension's hooks act on it; hosts must not run it as a command.
   */
  prompt?: boolean;
}

/** What a custom method handler receives. */
export interface MethodContext {
  crow: Crow;
  /** Aborted when the client cancels the request. */
  signal: AbortSignal;
}

/** One live session. At most one turn (or compaction, or clear) runs at a time; others are refused as busy. */
export interface CrowSession {
  readonly id: string;
  readonly cwd: string;
  /** Workspace roots besides `cwd` (absolute, existing directories): named in the system prompt, writable in the
   * sandbox, relative permission patterns apply in them too. */
  readonly additionalDirectories: readonly string[];
  readonly parentId: string | undefined;
  /** The conversation without the system prompt, in order. */
  readonly history: readonly ChatMessage[];
  /** The system prompt sent first on every request. */
  readonly systemPrompt: string;
  readonly mode: PermissionMode;
  readonly model: string | undefined;
  /** Sent as `reasoning_effort` with every request of a turn (undefined: not sent, the provider decides). */
  readonly reasoningEffort: string | undefined;
  readonly title: string | null;
  /** The current plan (the `todo` tool's list; empty when the model made none). */
  readonly plan: readonly PlanEntry[];
  /**
   * Skills the session's tool set serves (its MCP servers'), for the skills extension; undefined when the tool set
   * serves none (nothing to wait for). Never rejects.
   */
  externalSkills(signal?: AbortSignal): Promise<ExternalSkills> | undefined;
  /** Whether a turn (or compaction/clear) is running. */
  readonly running: boolean;
  /** The runtime this session belongs to. */
  readonly crow: Crow;

  /** Runs one turn with `content` as the user message. */
  prompt(content: string | ContentPart[], options?: PromptOptions): PromptRun;
  /**
   * Steers the running prompt turn: `content` joins the conversation as the user's message after the running tool
   * calls have answered, before the turn's next request (a turn about to end makes one more request for it), and a
   * `message_appended` event announces it then. `"injected"`: the turn took it, and will send it to the model before
   * it ends unless it is cancelled or fails first (then a notice says it was dropped). `"idle"`: no prompt turn runs
   * (or the running one has already decided to stop): nothing was queued and nothing starts.
   */
  steer(content: string | ContentPart[], options?: { original?: unknown }): SteerOutcome;
  /** Aborts the running turn; false when nothing runs. */
  cancel(): boolean;
  /** Compacts the history now (rejects with `SessionBusyError` while a turn runs, `CompactionError` on failure). */
  compact(): Promise<CompactionResult>;
  /** A fresh context: the stored history is archived; returns the archive id (none without a store). */
  clear(): Promise<string | undefined>;
  /** The user messages this session can be rewound to, with what the agent's turn after each changed in the workspace. */
  rewindPoints(): Promise<RewindPoint[]>;
  /**
   * Goes back to just before a user message: the workspace files the agent's turns changed since (a path someone
   * else changed since is left alone and listed unless `overwrite`), the conversation (archived, never deleted), or
   * both. Rejects with `SessionBusyError` while a turn runs, and with a `RewindError` for a seq that is no user message.
   */
  rewind(request: RewindRequest): Promise<RewindResult>;
  setMode(mode: PermissionMode): void;
  /** Switches the model (the next request uses it; stored with the session). */
  setModel(model: string): void;
  /**
   * Sets the `reasoning_effort` of the next requests (undefined: send none), stored with the session. Which levels a
   * model accepts is the host's knowledge (its model configuration), not checked here.
   */
  setReasoningEffort(effort: string | undefined): void;
  /** Replaces the plan and tells the listeners (a `plan` event with the whole list). */
  setPlan(entries: readonly PlanEntry[]): void;
  /** The slash commands of this session (built-in and extensions'). */
  commands(): CommandInfo[];
  /** Runs `/name args` and returns the answer text. Unknown names answer so; never sent to the model. */
  command(name: string, args?: string): Promise<string>;
  /** Tells the session's listeners something (an extension's notice; the ACP layer shows it to the user). */
  notify(message: string, level?: "info" | "warning" | "error"): void;
  /** Asks the user about a tool call through the session's asker (`reject` without one). */
  askPermission(request: PermissionRequest): Promise<PermissionAnswer>;
  /** Whether the session's host can put a question of this kind (default a form) to a person now. */
  canAskUser(mode?: UserQuestion["mode"]): boolean;
  /**
   * Asks the user (the `ask_user` tool, a tool server's question). Never rejects: without a host that can ask, the
   * answer is a decline with the reason; a question whose signal aborts is withdrawn (`cancel`).
   */
  askUser(question: UserQuestion): Promise<UserAnswer>;
  /** A URL question (`askUser` with mode `url`) is done on the asker's side: the host may stop showing it. */
  completeUserQuestion(id: string): void;
  /**
   * Problems to show the user when the session opens: tool servers that failed, extensions that did not load, and
   * warnings extensions published while it opened (before any host could subscribe), e.g. invalid skills.
   */
  problems(): string[];
  /**
   * Listens to the session's one event stream: every event, in order — a running turn's loop events (text deltas,
   * tool calls…) and the session's own (compaction, title, notices, mode…); returns the unsubscribe function. A
   * listener that returns a promise (a write) is waited for like the session's message writes: by a fork, a clear
   * and the close.
   */
  subscribe(listener: (event: CrowEvent) => unknown): () => void;
  /** Stops the session (cancels its turn, waits for its writes, closes its tools). */
  close(): Promise<void>;
}

/** The runtime: sessions, extensions' commands and methods, the store. */
export interface Crow {
  /** The store sessions are kept in (undefined: memory only). */
  readonly store: Store | undefined;
  /** Problems found while loading extensions (also logged). */
  readonly extensionErrors: readonly string[];
  newSession(options: NewSessionOptions): Promise<CrowSession>;
  /** Opens a stored session with its history (a live copy is closed first). Rejects when it does not exist. */
  loadSession(id: string, options?: LoadSessionOptions): Promise<CrowSession>;
  /**
   * Forks a stored session: a new session (fresh id) starting as a copy of its settings and history up to now (a
   * live source's pending writes are stored first), linked by `forkedFrom`. Open it with `loadSession`. Rejects
   * without a store, and with MethodError -32002 for an unknown session.
   */
  forkSession(
    id: string,
    options?: { cwd?: string; additionalDirectories?: readonly string[] },
  ): Promise<SessionRecord>;
  /** A live session by id. */
  session(id: string): CrowSession | undefined;
  /**
   * Stored sessions, most recently updated first (`topLevel`: no subagent children; `prompted`: only sessions with a
   * stored message or archive; see the store's `ListSessionsOptions`).
   */
  listSessions(options?: {
    cwd?: string;
    cursor?: string;
    limit?: number;
    parentId?: string;
    topLevel?: boolean;
    prompted?: boolean;
  }): Promise<{
    sessions: SessionRecord[];
    nextCursor?: string;
  }>;
  /** Names of the LLM providers extensions registered. */
  providers(): string[];
  /** Names of the custom methods (built-in and extensions'). */
  methods(): string[];
  /** Calls a custom method; rejects with `MethodError` (unknown method: -32601). */
  callMethod(name: string, params: unknown, ctx?: Partial<MethodContext>): Promise<unknown>;
  /** Closes every live session, then the store (when the runtime opened it). */
  close(): Promise<void>;
}

/** Thrown when a session is asked to do something while a turn runs. */
export class SessionBusyError extends Error {
  override name = "SessionBusyError";
}

/** Thrown by iterating a prompt run a second time, or one prompted with `{ events: false }` at all. */
export class RunIterationError extends Error {
  override name = "RunIterationError";
}
