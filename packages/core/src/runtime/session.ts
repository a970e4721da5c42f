/**
 * One live session (the runtime's `CrowSession`): its history, model, mode, hook bus and tools, and at most one
 * running turn. It knows nothing of ACP or MCP: hosts feed it prompt content and relay its events. Persistence,
 * permissions, the doom-loop guard and the compaction watcher reach it through hooks registered by the built-in
 * extensions. What happens inside one turn, with the turn-level compaction policy, is in turn.ts; whether a turn
 * may start, and cancelling and steering it, in turn-slot.ts.
 */

import type { PermissionAnswer, PermissionMode, PermissionRequest } from "../api/permissions.js";
import type {
  CommandInfo,
  Crow,
  CrowEvent,
  CrowSession,
  PlanEntry,
  PromptOptions,
  PromptResult,
  PromptRun,
  SteerOutcome,
} from "../api/types.js";
import { askThrough, canAsk, type UserAnswer, type UserQuestion } from "../api/user-question.js";
import type { RewindPoint, RewindRequest, RewindResult } from "../checkpoints/types.js";
import { type Compaction, CompactionError, type CompactionReason, type CompactionResult } from "../compaction/index.js";
import { errorText } from "../error-text.js";
import type { SessionToolSet } from "../extensions/session-tool-set.js";
import { HookBus } from "../hooks/bus.js";
import type { HookContext, HookError } from "../hooks/types.js";
import type { ChatMessage, ContentPart, ToolOutcome, Usage } from "../messages.js";
import type { ExternalSkills } from "../tools.js";
import { commandList, runCommand } from "./commands.js";
import { PromptRunImpl } from "./run.js";
import type { SessionParts } from "./session-parts.js";
import { runPromptTurn, type SessionWork, type TurnModel, withReasoningEffort } from "./turn.js";
import { TurnSlot } from "./turn-slot.js";

export class CrowSessionImpl implements CrowSession {
  readonly id: string;
  readonly cwd: string;
  readonly additionalDirectories: readonly string[];
  readonly parentId: string | undefined;
  readonly crow: Crow;
  readonly bus: HookBus;
  readonly tools: SessionToolSet;
  /** The compaction handle (the built-in compaction extension feeds it the prompt sizes). */
  readonly compaction: Compaction;
  readonly history: ChatMessage[] = [];
  systemPrompt: string;
  private currentMode: PermissionMode;
  private currentModel: string | undefined;
  private currentEffort: string | undefined;
  private currentTitle: string | null;
  private currentPlan: readonly PlanEntry[] = [];
  /** The running turn, or work between turns, and whether another process took the session over. */
  private readonly slot = new TurnSlot();
  private writes: Promise<void> = Promise.resolve();
  private readonly listeners = new Set<(event: CrowEvent) => unknown>();
  private readonly reported = new Set<string>();
  private readonly cleanups: Array<() => unknown> = [];
  private closed = false;
  /** Warnings and errors published while `start` ran: nobody outside could listen yet, so `problems()` carries them. */
  private readonly openingProblems: string[] = [];
  private starting = false;

  constructor(private readonly init: SessionParts) {
    this.id = init.id;
    this.cwd = init.cwd;
    this.additionalDirectories = init.additionalDirectories ?? [];
    this.parentId = init.parentId;
    this.crow = init.crow;
    this.tools = init.tools;
    this.systemPrompt = init.systemPrompt;
    this.currentMode = init.mode;
    this.currentModel = init.model;
    this.currentEffort = init.reasoningEffort;
    this.currentTitle = init.title;
    this.history.push(...init.history);
    this.bus = new HookBus({ onError: (error) => this.hookFailed(error) });
    this.compaction = init.makeCompaction(this);
    init.registry.installHooks(this.bus, this);
  }

  /** Runs the extensions' session setups (each isolated), then `session_start`; `problems()` reports `problems`. */
  async start(resumed: boolean, problems: readonly string[] = []): Promise<void> {
    this.openingProblems.push(...problems);
    this.starting = true;
    try {
      await this.runSetups();
      await this.bus.emit("session_start", { sessionId: this.id, cwd: this.cwd, resumed }, this.hookContext());
    } finally {
      this.starting = false;
    }
  }

  private async runSetups(): Promise<void> {
    for (const { extension, setup } of this.init.registry.setups) {
      try {
        const cleanup = await setup(this);
        if (typeof cleanup === "function") this.cleanups.push(cleanup);
      } catch (error) {
        this.report(
          `${extension}:session`,
          `Extension "${extension}" failed to set up the session: ${errorText(error)}`,
        );
      }
    }
  }

  get mode(): PermissionMode {
    return this.currentMode;
  }

  get model(): string | undefined {
    return this.currentModel;
  }

  get reasoningEffort(): string | undefined {
    return this.currentEffort;
  }

  get title(): string | null {
    return this.currentTitle;
  }

  get plan(): readonly PlanEntry[] {
    return this.currentPlan;
  }

  setPlan(entries: readonly PlanEntry[]): void {
    this.currentPlan = entries.map((e) => ({ content: e.content, status: e.status, priority: e.priority }));
    this.publish({ type: "plan", entries: this.currentPlan.map((e) => ({ ...e })) });
  }

  get running(): boolean {
    return this.slot.running;
  }

  setMode(mode: PermissionMode): void {
    this.currentMode = mode;
    this.publish({ type: "mode", mode });
  }

  setModel(model: string): void {
    this.currentModel = model;
    this.publish({ type: "model", model });
  }

  setReasoningEffort(effort: string | undefined): void {
    this.currentEffort = effort;
    this.publish({ type: "reasoning_effort", effort: effort ?? null });
  }

  /** Sets the title and tells the listeners (persistence stores it first and passes the stored time). */
  setTitle(title: string, updatedAt: string = new Date().toISOString()): void {
    this.currentTitle = title;
    this.publish({ type: "title", title, updatedAt });
  }

  subscribe(listener: (event: CrowEvent) => unknown): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  notify(message: string, level: "info" | "warning" | "error" = "info"): void {
    if (this.starting && level !== "info") this.openingProblems.push(message);
    this.publish({ type: "notice", level, message });
  }

  async askPermission(request: PermissionRequest): Promise<PermissionAnswer> {
    return this.init.askPermission ? this.init.askPermission(request) : "reject";
  }

  canAskUser(mode: UserQuestion["mode"] = "form"): boolean {
    return canAsk(this.init.askUser, mode);
  }

  askUser(question: UserQuestion): Promise<UserAnswer> {
    return askThrough(this.init.askUser, question);
  }

  completeUserQuestion(id: string): void {
    this.init.askUser?.completed?.(id);
  }

  /** The one event stream: every event (loop's, session's) to every listener, in order; writes join `this.writes`. */
  publish(event: CrowEvent): void {
    const failed = (error: unknown) =>
      this.init.logger.warn(`session ${this.id}: a session listener failed: ${errorText(error)}`);
    for (const listener of [...this.listeners]) {
      try {
        const written = listener(event);
        if (written instanceof Promise) {
          const settled = written.then(undefined, failed);
          this.writes = this.writes.then(() => settled);
        }
      } catch (error) {
        failed(error);
      }
    }
  }

  /** Logs a problem and tells the user once per key (a hook failing on every request is said once). */
  report(key: string, message: string): void {
    this.init.logger.warn(`session ${this.id}: ${message}`);
    if (this.reported.has(key)) return;
    this.reported.add(key);
    this.notify(message, "warning");
  }

  private hookFailed(error: HookError): void {
    const owner = error.handler.includes(":") ? `Extension "${error.handler.split(":")[0]}"` : `Hook ${error.handler}`;
    this.report(error.handler, `${owner} failed at ${error.point}: ${error.message} (the turn went on without it)`);
  }

  private hookContext(signal: AbortSignal = new AbortController().signal): HookContext {
    return { sessionId: this.id, signal };
  }

  /**
   * Queues the `message` hook for a message now part of the history (in order). Resolves when it has run: the loop
   * waits for that before running an assistant message's tool calls (write-ahead), other messages do not wait.
   */
  record(message: ChatMessage, usage?: Usage, outcome?: ToolOutcome): Promise<void> {
    const event = { message, ...(usage ? { usage } : {}), ...(outcome ? { outcome } : {}) };
    this.writes = this.writes.then(() => this.bus.emit("message", event, this.hookContext()));
    return this.writes;
  }

  /** Resolves once every `message` hook queued so far has run (persistence: everything is stored). */
  flush(): Promise<void> {
    return this.writes;
  }

  steer(content: string | ContentPart[], options: { original?: unknown } = {}): SteerOutcome {
    return this.slot.steer(content, options.original);
  }

  cancel(): boolean {
    return this.slot.cancel();
  }

  prompt(content: string | ContentPart[], options: PromptOptions = {}): PromptRun {
    let turn: SessionWork;
    try {
      turn = this.slot.beginPrompt((message) => this.notify(message, "warning"));
    } catch (error) {
      return PromptRunImpl.refused(error);
    }
    // Subscribed before the turn starts: the run (unless `events: false`) keeps every event of it for its iterator.
    const run = new PromptRunImpl(() => this.cancel(), this.subscribe.bind(this), {
      events: options.events ?? true,
      ...(options.onEvent ? { onEvent: options.onEvent } : {}),
    });
    const onAbort = () => this.cancel();
    if (options.signal?.aborted) onAbort();
    options.signal?.addEventListener("abort", onAbort, { once: true });
    const ended = this.startTurn(content, turn, options.original);
    this.slot.track(ended);
    ended.then(
      (result) => {
        options.signal?.removeEventListener("abort", onAbort);
        run.finish(result);
      },
      (error: unknown) => {
        options.signal?.removeEventListener("abort", onAbort);
        run.fail(error);
      },
    );
    return run;
  }

  /** One prompt turn (turn.ts), on the session's current model; the session is free again when it ends. */
  private async startTurn(
    content: string | ContentPart[],
    turn: SessionWork,
    original?: unknown,
  ): Promise<PromptResult> {
    try {
      const llm = this.init.llm;
      const model = this.currentModel;
      if (!llm || !model) throw new Error("no provider or model configured");
      const { loop } = this.init;
      const params = withReasoningEffort(loop.params, this.currentEffort);
      const target: TurnModel = { llm, model, settings: params ? { ...loop, params } : loop };
      return await runPromptTurn(this, target, content, turn, original);
    } finally {
      this.slot.end();
    }
  }

  /** Compaction inside a turn (threshold or context overflow). A failure is reported and the turn goes on. */
  async compactWithin(signal: AbortSignal, reason: CompactionReason): Promise<boolean> {
    try {
      return (await this.compactHistory(reason, signal)).compacted;
    } catch (error) {
      this.init.logger.warn(`session ${this.id}: compaction failed: ${errorText(error)}`);
      return false;
    }
  }

  private async compactHistory(reason: CompactionReason, signal: AbortSignal): Promise<CompactionResult> {
    const llm = this.init.llm;
    const model = this.currentModel;
    if (!llm || !model) throw new CompactionError("no provider or model configured");
    const result = await this.compaction.compact({
      history: this.history,
      llm,
      model,
      reason,
      signal,
      onEvent: (event) => this.publish(event),
    });
    if (result.compacted) this.history.splice(0, this.history.length, ...result.history);
    return result;
  }

  compact(): Promise<CompactionResult> {
    return this.slot.between((turn) => this.compactHistory("manual", turn.controller.signal));
  }

  rewindPoints(): Promise<RewindPoint[]> {
    return this.flush().then(() => this.init.rewinder.points(this));
  }

  rewind(request: RewindRequest): Promise<RewindResult> {
    return this.slot.between(() => this.flush().then(() => this.init.rewinder.rewind(this, request)));
  }

  clear(): Promise<string | undefined> {
    return this.slot.between(async () => {
      let archiveId: string | undefined;
      if (this.init.clearStored) {
        await this.flush();
        archiveId = await this.init.clearStored(this.id);
      }
      this.history.splice(0, this.history.length);
      this.compaction.forget();
      // The plan belonged to the cleared conversation.
      if (this.currentPlan.length > 0) this.setPlan([]);
      return archiveId;
    });
  }

  commands(): CommandInfo[] {
    return commandList(this.init.registry, this);
  }

  command(name: string, args = ""): Promise<string> {
    return runCommand(this.init.registry, this, name, args);
  }

  /** Another process took the session over (its lease): the running turn stops and no other starts here. */
  lostTo(message: string): void {
    this.slot.lose(message);
    this.notify(message, "error");
  }

  /** Problems to show the user when the session opens (tool servers that failed, extensions that did not load). */
  problems(): string[] {
    return [...this.crow.extensionErrors, ...this.tools.failures(), ...this.openingProblems];
  }

  externalSkills(signal?: AbortSignal): Promise<ExternalSkills> | undefined {
    return this.tools.externalSkills(signal);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.cancel();
    // The cancelled turn still appends what streamed (the partial answer, its calls' results): stored before the end.
    await this.slot.settled();
    await this.flush();
    await this.bus.emit("session_end", { sessionId: this.id }, this.hookContext());
    for (const cleanup of this.cleanups.reverse()) {
      try {
        await cleanup();
      } catch (error) {
        this.init.logger.warn(`session ${this.id}: an extension's session cleanup failed: ${errorText(error)}`);
      }
    }
    await this.tools.close();
    await this.init.onClose(this);
  }
}
