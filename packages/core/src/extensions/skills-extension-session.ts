/**
 * The skills extension's per-session state and how a session gets it: the skills read once per workspace (shared by
 * the prompt hint and the session's setup), the keyword index at once, then the session's external skills and the
 * dense re-rank joining that index when they are ready, never holding the session up.
 */
import type { CrowSession } from "../api/types.js";
import type { ChatMessage } from "../messages.js";
import type { SkillEmbeddingCache } from "../skills/cache.js";
import type { Embedder } from "../skills/embedder.js";
import { createSkillIndex, type SkillIndex } from "../skills/search.js";
import { loadSessionSkills, type SessionSkills } from "../skills/session-load.js";
import { type SkillTool, skillTools } from "../skills/tools.js";
import type { Skill, SkillProblem } from "../skills/types.js";
import type { Logger } from "./api.js";
import { withExternalSkills } from "./skills-extension-external.js";

/** The names of the two skill tools. */
export const SKILL_TOOLS = ["discover_skills", "get_skill_details"] as const;

/** What one session knows about its skills. */
export interface SessionSkillState {
  index: SkillIndex;
  tools: SkillTool[];
  /** Skills brought into the conversation (trigger or get_skill_details): kept in context through compaction. */
  brought: Map<string, Skill>;
  /** The brought skills the latest request carried. */
  present: Set<string>;
  /** User messages carrying an injection → its text (request view only). */
  injections: WeakMap<ChatMessage, string>;
  /** Latest user messages already matched against the triggers. */
  examined: WeakSet<ChatMessage>;
  /** Settles when the hybrid index is in place or given up (undefined: keyword-only). */
  hybrid?: Promise<void>;
  /** Settles when the external skills joined the index or were given up. */
  external?: Promise<void>;
}

/** The dense re-rank of `skills.embeddings`: the embedder and where its vectors are cached. */
export interface SkillRerank {
  embedder: Embedder;
  cache: SkillEmbeddingCache;
}

/**
 * How long `discover_skills` waits for skill embeddings still in flight: the session opened without waiting, but a
 * search right after is worth a moment more for the better ranking (the cache makes later sessions instant).
 */
export const HYBRID_WAIT_MS = 5_000;

/**
 * How long a session's first request (or a skill tool) waits for its servers' skill listings: a slow server must not
 * hold the session up for long (the tool set bounds each listing too; one that comes later still joins).
 */
export const EXTERNAL_WAIT_MS = 5_000;

/**
 * Reads a workspace's skills once for a new session's prompt hint and reuses the read for its setup (same cwd,
 * moments later); a later session reads again, so it sees skills added (or a project trusted) meanwhile.
 */
export class SessionSkillsLoader {
  private readonly loading = new Map<string, Promise<SessionSkills>>();

  constructor(private readonly options: { home: string; dirs: readonly string[] }) {}

  /** The skills of `cwd`: a read in flight, or settled less than 5 s ago, is shared. */
  load(cwd: string): Promise<SessionSkills> {
    let pending = this.loading.get(cwd);
    if (!pending) {
      const read = loadSessionSkills({ workspace: cwd, home: this.options.home, dirs: this.options.dirs });
      pending = read;
      this.loading.set(cwd, read);
      // Forget it soon: a later session must see skills added meanwhile.
      const forget = () => setTimeout(() => this.loading.get(cwd) === read && this.loading.delete(cwd), 5_000).unref();
      read.then(forget, forget);
    }
    return pending;
  }

  /** Like {@link load}, then forgets that read: used by this session's hint and setup, the next session reads again. */
  async take(cwd: string): Promise<SessionSkills> {
    const pending = this.load(cwd);
    const loaded = await pending;
    if (this.loading.get(cwd) === pending) this.loading.delete(cwd);
    return loaded;
  }
}

/**
 * Opens a session's skills: tells the user what could not be loaded or was held back, builds the keyword index at
 * once, and starts the external skills and (with `rerank`) the hybrid index, which replace the index when ready.
 * Returns the state and `close`, which stops what is still in flight.
 */
export async function openSessionSkills(
  log: Logger,
  session: CrowSession,
  loaded: SessionSkills,
  rerank: SkillRerank | undefined,
): Promise<{ state: SessionSkillState; close: () => void }> {
  reportProblems(
    log,
    session,
    loaded.problems,
    "Some skills could not be loaded",
    "Some skills were loaded with a correction",
  );
  if (loaded.untrusted) notifyUntrusted(session, loaded.untrusted);
  const index = await createSkillIndex(loaded.skills);
  const state: SessionSkillState = {
    index,
    tools: skillTools(index),
    brought: new Map(),
    present: new Set(),
    injections: new WeakMap(),
    examined: new WeakSet(),
  };
  const controller = new AbortController();
  const joined = joinExternalSkills(log, session, state, loaded.skills, controller.signal);
  if (rerank) joinHybridIndex(log, session, state, joined, rerank, controller.signal);
  return { state, close: () => controller.abort() };
}

/** The one notice about an untrusted project's skills left out. */
function notifyUntrusted(session: CrowSession, { root, count }: { root: string; count: number }): void {
  session.notify(
    `${count} project skill${count === 1 ? "" : "s"} in ${root} ${count === 1 ? "is" : "are"} not offered ` +
      "to the model: this project is not trusted. If you trust its authors, run `crow skills trust` there " +
      "and start a new session.",
    "warning",
  );
}

/**
 * Joins the session's external skills to its index (`state.external` while on the way). Resolves, once that settled,
 * to the session's skills: `local` plus the external ones that joined.
 */
function joinExternalSkills(
  log: Logger,
  session: CrowSession,
  state: SessionSkillState,
  local: readonly Skill[],
  signal: AbortSignal,
): Promise<readonly Skill[]> {
  let skills = local;
  const external = withExternalSkills(session, local, signal)
    .then((joined) => {
      if (!joined || signal.aborted) return;
      skills = joined.skills;
      state.index = joined;
      state.tools = skillTools(joined);
      log.debug(`session ${session.id}: ${joined.skills.length - local.length} skills from MCP servers`);
    })
    .catch((error: unknown) => log.warn(`session ${session.id}: external skills failed: ${String(error)}`))
    .finally(() => {
      // Settled: requests stop waiting for it (a session without MCP skills never waits at all).
      state.external = undefined;
    });
  state.external = external;
  return external.then(() => skills);
}

/** Embeds `skills` once they are known and puts the hybrid index in place (`state.hybrid` while on the way). */
function joinHybridIndex(
  log: Logger,
  session: CrowSession,
  state: SessionSkillState,
  skills: Promise<readonly Skill[]>,
  { embedder, cache }: SkillRerank,
  signal: AbortSignal,
): void {
  state.hybrid = skills
    .then((known) => {
      if (known.length === 0 || signal.aborted) return undefined;
      return createSkillIndex(known, { embedder, cache, signal }).then((hybrid) => {
        if (signal.aborted) return;
        reportProblems(log, session, hybrid.problems, "Skill search uses keywords only");
        if (!hybrid.dense) return;
        state.index = hybrid;
        state.tools = skillTools(hybrid);
        log.debug(`session ${session.id}: ${hybrid.skills.length} skills embedded; hybrid search on`);
      });
    })
    .catch((error: unknown) => log.warn(`session ${session.id}: skill embeddings failed: ${String(error)}`))
    .finally(() => {
      state.hybrid = undefined;
    });
}

/** One line per problem, for the log and the notice. */
function describeProblems(problems: readonly SkillProblem[]): string {
  return problems.map((p) => `- ${p.path}: ${p.message}`).join("\n");
}

/**
 * Logs every problem; tells the user about errors and warnings (overrides and notes are only logged), in one notice.
 * With `warningTitle`, warnings (a skill loaded all the same, e.g. under its folder's name) have their own heading,
 * so a skill that loaded is never said to have failed.
 */
function reportProblems(
  log: Logger,
  session: CrowSession,
  problems: readonly SkillProblem[],
  title: string,
  warningTitle?: string,
): void {
  if (problems.length === 0) return;
  log.info(`session ${session.id}: skill problems:\n${describeProblems(problems)}`);
  const shown = problems.filter((p) => p.severity !== "info");
  if (shown.length === 0) return;
  if (!warningTitle) {
    session.notify(`${title}:\n${describeProblems(shown)}`, "warning");
    return;
  }
  const errors = shown.filter((p) => p.severity === "error");
  const warnings = shown.filter((p) => p.severity !== "error");
  const parts = [
    ...(errors.length > 0 ? [`${title}:\n${describeProblems(errors)}`] : []),
    ...(warnings.length > 0 ? [`${warningTitle}:\n${describeProblems(warnings)}`] : []),
  ];
  session.notify(parts.join("\n"), "warning");
}

/** Resolves when `promise` settles, `ms` pass, or `signal` aborts, whichever comes first. */
export function settledWithin(promise: Promise<unknown>, ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
    promise.then(done, done);
  });
}
