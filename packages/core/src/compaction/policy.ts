/**
 * When a session compacts: every rule in one place (compact-history.ts is how it is done).
 *
 * - **threshold**: before a prompt turn, when the last request's prompt was over `MAX_COMPACT_TOKENS`
 *   ({@link compactionThreshold}). The prompt size is the last response's `promptTokens`, watched on
 *   `after_response` ({@link watchPromptSize}, the built-in `compaction` extension), or, for a session resumed from
 *   the store, the last stored usage ({@link storedPromptTokens});
 * - **context overflow**: a turn the provider refused as too long compacts, then runs once more
 *   ({@link retriesAfterCompaction});
 * - **manual**: `/compact` and `_crow/compact`, between turns.
 *
 * The prompt size is forgotten whenever the history it measured is replaced: by a compaction, `/clear`, or a
 * conversation rewind ({@link Compaction.forget}). The session (runtime/session.ts) and its turn (runtime/turn.ts)
 * apply these rules where they happen; they decide nothing of their own.
 */
import type { AfterResponseEvent } from "../hooks/types.js";
import type { LlmError } from "../llm/types.js";
import type { Usage } from "../messages.js";
import {
  type CompactHistoryOptions,
  type CompactionResult,
  type CompactRequest,
  compactHistory,
} from "./compact-history.js";

/** `MAX_COMPACT_TOKENS` when neither the configuration nor the model's context window says otherwise. */
export const DEFAULT_MAX_COMPACT_TOKENS = 120_000;

/** Fraction of a known context window at which compaction starts when `MAX_COMPACT_TOKENS` is not set. */
export const COMPACT_FRACTION = 0.8;

/**
 * The effective `MAX_COMPACT_TOKENS`: the configured value, else a fraction ({@link COMPACT_FRACTION}) of the
 * model's context window when it is known, else {@link DEFAULT_MAX_COMPACT_TOKENS}.
 */
export function compactionThreshold(
  configured: number | undefined,
  contextWindow?: number,
  fraction = COMPACT_FRACTION,
): number {
  if (configured !== undefined && configured > 0) return configured;
  if (contextWindow !== undefined && contextWindow > 0) return Math.floor(contextWindow * fraction);
  return DEFAULT_MAX_COMPACT_TOKENS;
}

/** The runtime's `compactionThreshold` option: a number, or one per model. */
export type ThresholdOption = number | ((model: string | undefined) => number);

/** The threshold of a session on `model` (whose context window, if known, is `contextWindow`) under `option`. */
export function thresholdFor(
  option: ThresholdOption | undefined,
  model: string | undefined,
  contextWindow?: number,
): number {
  return typeof option === "function" ? option(model) : compactionThreshold(option, contextWindow);
}

/** Whether a turn that stopped with `error` is worth one more run after a compaction: the prompt was too long. */
export function retriesAfterCompaction(error: Pick<LlmError, "kind"> | undefined): boolean {
  return error?.kind === "context_length_exceeded";
}

/**
 * The prompt size of a stored history: its last stored usage. A session continued in another process (`crow run
 * -s`, `session/load`, the SDK) thus still compacts by threshold; a compaction or `/clear` stores its history
 * without usage, so this is the last request since then.
 */
export function storedPromptTokens(stored: readonly { usage?: Usage }[]): number | undefined {
  return stored.findLast((m) => m.usage !== undefined)?.usage?.promptTokens;
}

export interface CompactionOptions extends CompactHistoryOptions {
  /** Prompt tokens above which the next turn starts with a compaction (read on every check: the model may change). */
  threshold: () => number;
}

/** One session's compaction: the prompt size its threshold rule reads, and the compaction itself. */
export class Compaction {
  /** Prompt tokens of the last request; undefined until a response is seen, and after the history was replaced. */
  private promptTokens: number | undefined;

  constructor(private readonly options: CompactionOptions) {}

  /** Records the prompt size of a request (its response's `promptTokens`). */
  observe(promptTokens: number): void {
    this.promptTokens = promptTokens;
  }

  /** Forgets the prompt size: the history it measured was replaced (compaction, `/clear`, rewind). */
  forget(): void {
    this.promptTokens = undefined;
  }

  /** The threshold rule: whether the last request's prompt was over the threshold (compact before the next turn). */
  due(): boolean {
    return this.promptTokens !== undefined && this.promptTokens > this.options.threshold();
  }

  /** Compacts (see {@link compactHistory}); a compaction that happened forgets the prompt size. */
  async compact(request: CompactRequest): Promise<CompactionResult> {
    const result = await compactHistory(request, this.options);
    if (result.compacted) this.forget();
    return result;
  }
}

/**
 * The prompt-size watcher: on every `after_response` with usage, the session's compaction observes the prompt
 * size. `on` registers the observer (the extension API's `crow.on`, or a hook bus); `compactionOf` finds the
 * compaction of the hook's context (none: the session has no compaction, nothing is recorded).
 */
export function watchPromptSize<C>(
  on: (point: "after_response", handler: (event: AfterResponseEvent, ctx: C) => void) => unknown,
  compactionOf: (ctx: C) => Compaction | undefined,
): void {
  on("after_response", ({ usage }, ctx) => {
    if (usage) compactionOf(ctx)?.observe(usage.promptTokens);
  });
}

/** The compactions of a runtime's sessions, by session object (closed sessions are collected with theirs). */
export class SessionCompactions {
  private readonly bySession = new WeakMap<object, Compaction>();

  /** The compaction of a new session, known from now on as `session`'s. */
  open(session: object, options: CompactionOptions): Compaction {
    const compaction = new Compaction(options);
    this.bySession.set(session, compaction);
    return compaction;
  }

  of(session: object): Compaction | undefined {
    return this.bySession.get(session);
  }
}
