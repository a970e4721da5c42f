/**
 * One live session: its history, model, permission mode, hook bus and tool router, and at most one running turn.
 * Knows nothing of ACP: the ACP layer feeds it prompt content and translates the loop events it relays.
 */
import {
  type ChatMessage,
  type Compaction,
  type CompactionReason,
  type CompactionResult,
  type ContentPart,
  HookBus,
  installCompaction,
  installDoomLoopGuard,
  installPermissions,
  type LlmClient,
  type LlmError,
  type LoopEvent,
  type PermissionAnswer,
  type PermissionMode,
  type PermissionRequest,
  type Permissions,
  runLoop,
  type StopReason,
  type Usage,
} from "@crow/core";
import type { AgentConfig } from "../config/index.js";
import { log } from "../log.js";
import type { ToolRouter } from "../tools/types.js";
import { compactionThresholdOf, isContextOverflow, type SessionCompactionOptions } from "./compaction.js";
import { TurnBusyError } from "./modes.js";
import type { MessageRecorder } from "./persistence.js";
import { systemPrompt } from "./system-prompt.js";

export interface SessionOptions {
  id: string;
  cwd: string;
  config: AgentConfig;
  /** Undefined when no provider is configured (prompts then fail with a clear error). */
  llm: LlmClient | undefined;
  tools: ToolRouter;
  mode?: PermissionMode;
  askPermission?: (request: PermissionRequest) => Promise<PermissionAnswer>;
  /** A loaded session's history (without the system prompt), already repaired (`repairToolPairs`). */
  history?: ChatMessage[];
  /** The stored system prompt of a loaded session (default: rendered for `cwd`). */
  system?: string;
  /** Persistence: gets every message as soon as it is complete. */
  recorder?: MessageRecorder;
  /** Compaction and `/clear`: where the history is swapped, who is told. */
  compaction?: SessionCompactionOptions;
}

/** How a turn ended. `reason` is `cancelled` whenever `cancel()` was called during the turn. */
export interface TurnOutcome {
  reason: StopReason;
  error?: LlmError;
  lastUsage?: Usage;
}

export class Session {
  readonly id: string;
  readonly cwd: string;
  readonly tools: ToolRouter;
  readonly bus: HookBus;
  readonly permissions: Permissions;
  readonly compaction: Compaction;
  /** The conversation without the system prompt (user, assistant and tool messages, in order). */
  readonly history: ChatMessage[] = [];
  model: string | undefined;
  private readonly system: string;
  private turn: { controller: AbortController; cancelled: boolean } | undefined;

  constructor(private readonly options: SessionOptions) {
    this.id = options.id;
    this.cwd = options.cwd;
    this.tools = options.tools;
    this.model = options.config.model;
    this.system = options.system ?? systemPrompt(options.cwd);
    if (options.history) this.history.push(...options.history);
    this.bus = new HookBus({ onError: (e) => log.warn(`hook ${e.handler} failed at ${e.point}: ${e.message}`) });
    // The guard goes first so a looping model does not keep prompting the user.
    installDoomLoopGuard(this.bus);
    this.permissions = installPermissions(this.bus, {
      mode: options.mode ?? options.config.mode,
      ...(options.askPermission ? { askPermission: options.askPermission } : {}),
    });
    const recorder = options.recorder;
    this.compaction = installCompaction(this.bus, {
      sessionId: this.id,
      threshold: () => compactionThresholdOf(options.config, this.model),
      ...(options.compaction?.store ? { store: options.compaction.store } : {}),
      ...(recorder ? { beforeSwap: () => recorder.flush() } : {}),
    });
  }

  get mode(): PermissionMode {
    return this.permissions.mode;
  }

  get running(): boolean {
    return this.turn !== undefined;
  }

  /** Aborts the running turn, if any; it then ends as `cancelled` whatever else happens on the way out. */
  cancel(): boolean {
    if (!this.turn) return false;
    this.turn.cancelled = true;
    this.turn.controller.abort();
    return true;
  }

  /**
   * Runs one prompt turn with `content` as the user message, relaying every loop event to `onEvent` (synchronously,
   * in order). The history keeps the user message and everything the loop appended, so it is valid on every exit.
   */
  async runTurn(content: string | ContentPart[], onEvent: (event: LoopEvent) => void): Promise<TurnOutcome> {
    if (this.turn) throw new TurnBusyError("A prompt is already running in this session; cancel it first.");
    const llm = this.options.llm;
    const model = this.model;
    if (!llm || !model) throw new Error("no provider or model configured");
    const turn = { controller: new AbortController(), cancelled: false };
    this.turn = turn;
    try {
      const user: ChatMessage = { role: "user", content };
      this.history.push(user);
      this.options.recorder?.record(user);
      // The last request was over MAX_COMPACT_TOKENS: compact first, with this prompt as the latest user message.
      if (this.compaction.due()) await this.compactWithin(turn.controller.signal, "threshold");
      let outcome = await this.runLoopOnce(llm, model, turn.controller.signal, onEvent, true);
      if (outcome.reason === "error" && isContextOverflow(outcome.error) && !turn.cancelled) {
        // The provider refused the prompt as too long: compact, then retry the turn once.
        if (await this.compactWithin(turn.controller.signal, "context_length")) {
          outcome = await this.runLoopOnce(llm, model, turn.controller.signal, onEvent, false);
        }
      }
      // The turn answers only once its messages are stored: a client may load the session right after.
      await this.options.recorder?.flush();
      // The race: a cancel that lands after the loop decided otherwise still answers `cancelled`.
      if (turn.cancelled) return { ...outcome, reason: "cancelled" };
      return outcome;
    } finally {
      this.turn = undefined;
    }
  }

  /**
   * One run of the loop over the current history. With `mayRetry`, a `stop` caused by a context-length error is
   * not relayed (the turn is about to compact and retry, and the client should see one stop only).
   */
  private async runLoopOnce(
    llm: LlmClient,
    model: string,
    signal: AbortSignal,
    onEvent: (event: LoopEvent) => void,
    mayRetry: boolean,
  ): Promise<TurnOutcome> {
    const events = runLoop(
      { messages: [{ role: "system", content: this.system }, ...this.history] },
      {
        llm,
        model,
        tools: this.tools,
        hooks: this.bus.loopHooks(),
        maxStepsPerTurn: this.options.config.maxStepsPerTurn,
        signal,
        sessionId: this.id,
      },
    );
    let outcome: TurnOutcome = { reason: "end_turn" };
    for await (const event of events) {
      if (event.type === "message_appended") {
        this.history.push(event.message);
        this.options.recorder?.record(event.message, event.usage);
      }
      if (event.type === "stop") {
        outcome = { reason: event.reason };
        if (event.error) outcome.error = event.error;
        if (event.lastUsage) outcome.lastUsage = event.lastUsage;
        if (mayRetry && event.reason === "error" && isContextOverflow(event.error)) continue;
      }
      onEvent(event);
    }
    return outcome;
  }

  /** Compaction inside a turn (threshold or context overflow). A failure is reported and the turn goes on. */
  private async compactWithin(signal: AbortSignal, reason: CompactionReason): Promise<boolean> {
    try {
      const result = await this.compactHistory(reason, signal);
      return result.compacted;
    } catch (error) {
      log.warn(`session ${this.id}: compaction failed: ${error instanceof Error ? error.message : String(error)}`);
      return false;
    }
  }

  private async compactHistory(reason: CompactionReason, signal: AbortSignal): Promise<CompactionResult> {
    const llm = this.options.llm;
    const model = this.model;
    if (!llm || !model) throw new Error("no provider or model configured");
    const onEvent = this.options.compaction?.onEvent;
    const result = await this.compaction.compact({
      history: this.history,
      llm,
      model,
      reason,
      signal,
      ...(onEvent ? { onEvent } : {}),
    });
    if (result.compacted) this.history.splice(0, this.history.length, ...result.history);
    return result;
  }

  /**
   * `/compact` and `_crow/compact`: compacts now, between turns (a prompt sent meanwhile is refused as busy, and
   * `cancel()` aborts the summary request). Rejects with TurnBusyError while a turn runs, and with core's
   * CompactionError when the summary or the swap fails (nothing changed then).
   */
  async compact(): Promise<CompactionResult> {
    const turn = this.begin();
    try {
      return await this.compactHistory("manual", turn.controller.signal);
    } finally {
      this.turn = undefined;
    }
  }

  /**
   * `/clear`: a fresh context. The stored history becomes an archive (inspectable, not lost) and the session keeps
   * its id with an empty history. Returns the archive id (none without a store). Rejects with TurnBusyError while a
   * turn runs.
   */
  async clear(): Promise<string | undefined> {
    this.begin();
    try {
      let archiveId: string | undefined;
      const store = this.options.compaction?.store;
      if (store) {
        await this.options.recorder?.flush();
        archiveId = await store.replaceMessages(this.id, []);
      }
      this.history.splice(0, this.history.length);
      this.compaction.lastPromptTokens = undefined;
      return archiveId;
    } finally {
      this.turn = undefined;
    }
  }

  /** Marks the session busy for work between turns. */
  private begin(): { controller: AbortController; cancelled: boolean } {
    if (this.turn) throw new TurnBusyError("A prompt is running in this session; stop it first (/stop) or wait.");
    const turn = { controller: new AbortController(), cancelled: false };
    this.turn = turn;
    return turn;
  }

  /** Stops the tool router (MCP servers, terminals). */
  async close(): Promise<void> {
    this.cancel();
    this.permissions.dispose();
    await this.tools.close();
  }
}
