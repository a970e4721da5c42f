/**
 * Skills as a built-in extension (DESIGN.md §5), wiring the engine in `../skills` into sessions through the public
 * extension API only:
 * - discovery per session in `~/.agents/skills`, `<home>/skills`, the configured `skills.dirs`, then, when the project
 *   is trusted (`crow skills trust`), `<cwd>/.crow/skills` and `<cwd>/.agents/skills` (later roots override earlier
 *   ones); an untrusted project's skills are left out with one notice; problems are logged and shown when the session
 *   opens, never fatal;
 * - progressive disclosure: one line in the system prompt (`skills_hint`), and the read-only tools `discover_skills`
 *   and `get_skill_details` (offered only to sessions that have skills);
 * - triggers: a `before_request` transform appends the instructions of skills whose trigger words occur in the latest
 *   user message (or named as `/skill-name`, the skill's command in the editor) — unless already in the context —
 *   to that message in the request only (the stored history keeps what
 *   the user wrote); the injection stays attached to that message in the session's later requests so the model keeps
 *   the instructions and the prompt prefix stays stable;
 * - compaction: a skill brought in (trigger or `get_skill_details`) whose instructions a compaction summarised away is
 *   re-attached to the compacted history's first user message; `get_skill_details` for a skill already in the
 *   context answers so instead of repeating it (never the same skill twice in one context);
 * - optional dense re-rank (`skills.embeddings`): the keyword index serves at once, the hybrid index replaces it when
 *   the skills are embedded (cached by content hash under `<home>/cache/skills`), so opening a session never waits
 *   for an embedding server;
 * - external skills: those the session's MCP servers serve (`CrowSession.externalSkills`) join the index once listed;
 *   the session's first request waits for the listing a bounded time (`EXTERNAL_WAIT_MS`).
 */
import path from "node:path";
import type { CrowSession } from "../api/types.js";
import type { RequestDraft } from "../hooks/types.js";
import { type ChatMessage, contentText } from "../messages.js";
import { SkillEmbeddingCache } from "../skills/cache.js";
import { type Embedder, openAiEmbedder } from "../skills/embedder.js";
import { loadedSkill } from "../skills/external.js";
import { skillReinjection, skillsInContext } from "../skills/in-context.js";
import { createSkillIndex, type SkillIndex } from "../skills/search.js";
import { loadSessionSkills, type SessionSkills } from "../skills/session-load.js";
import { type SkillTool, skillsHint, skillTools } from "../skills/tools.js";
import { matchTriggers, type TriggerMatch, triggerInjection } from "../skills/triggers.js";
import type { Skill, SkillProblem } from "../skills/types.js";
import type { Extension, ExtensionAPI } from "./api.js";
import { withExternalSkills } from "./skills-external.js";

/** The `skills` settings (config.yaml `skills:`; the agent validates them, SDK users may pass them in `config`). */
export interface SkillsSettings {
  /** `false` turns skills off entirely (no hint, no tools, no triggers). Default true. */
  enabled?: boolean;
  /** Extra skill roots (absolute, or relative to the Crow home), after `<home>/skills`, before the workspace's. */
  dirs?: string[];
  /** An OpenAI-compatible `/v1/embeddings` endpoint for the dense re-rank. */
  embeddings?: { baseURL: string; model: string; apiKey?: string; dimensions?: number };
}

/** Options of {@link skillsExtension}. */
export interface SkillsExtensionOptions {
  /** The Crow home (`<home>/skills`, the embedding cache). */
  home: string;
  /** Overrides what is read from `api.config.skills`. */
  settings?: SkillsSettings;
  /** The embedder (tests; default: from `settings.embeddings`). */
  embedder?: Embedder;
}

/** The names of the two skill tools. */
export const SKILL_TOOLS = ["discover_skills", "get_skill_details"] as const;

/** What one session knows about its skills. */
interface SessionSkillState {
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

/**
 * How long `discover_skills` waits for skill embeddings still in flight: the session opened without waiting, but a
 * search right after is worth a moment more for the better ranking (the cache makes later sessions instant).
 */
const HYBRID_WAIT_MS = 5_000;

/**
 * How long a session's first request (or a skill tool) waits for its servers' skill listings: a slow server must not
 * hold the session up for long (the tool set bounds each listing too; one that comes later still joins).
 */
const EXTERNAL_WAIT_MS = 5_000;

/**
 * Reads `config.skills` leniently: the agent's `AgentConfig` shape (`{enabled, dirs, embeddings: {baseURL, …}}`),
 * a bare list of directories, or config.yaml's spelling (`base_url`, `api_key`). Anything unusable is ignored.
 */
export function skillsSettings(raw: unknown): SkillsSettings {
  if (Array.isArray(raw)) return { dirs: raw.filter((d): d is string => typeof d === "string") };
  if (!raw || typeof raw !== "object") return {};
  const value = raw as Record<string, unknown>;
  const settings: SkillsSettings = {};
  if (typeof value.enabled === "boolean") settings.enabled = value.enabled;
  if (Array.isArray(value.dirs)) settings.dirs = value.dirs.filter((d): d is string => typeof d === "string");
  const e = value.embeddings as Record<string, unknown> | undefined | null;
  const baseURL = e?.baseURL ?? e?.base_url;
  if (e && typeof baseURL === "string" && typeof e.model === "string") {
    const apiKey = e.apiKey ?? e.api_key;
    settings.embeddings = {
      baseURL,
      model: e.model,
      ...(typeof apiKey === "string" && apiKey !== "" ? { apiKey } : {}),
      ...(typeof e.dimensions === "number" ? { dimensions: e.dimensions } : {}),
    };
  }
  return settings;
}

/** The message with `injection` appended after the user's request. */
function withInjection(message: ChatMessage, injection: string): ChatMessage {
  if (message.role !== "user") return message;
  if (typeof message.content === "string") return { ...message, content: `${message.content}\n\n${injection}` };
  return { ...message, content: [...message.content, { type: "text", text: injection }] };
}

/** One line per problem, for the log and the notice. */
function describeProblems(problems: readonly SkillProblem[]): string {
  return problems.map((p) => `- ${p.path}: ${p.message}`).join("\n");
}

/** The skills extension. `createRuntime` loads it as the built-in `skills`. */
export function skillsExtension(options: SkillsExtensionOptions): Extension {
  return (api) => {
    const settings = options.settings ?? skillsSettings(api.config.skills);
    if (settings.enabled === false) return;
    const dirs = (settings.dirs ?? []).map((dir) => path.resolve(options.home, dir));
    const embedder =
      options.embedder ??
      (settings.embeddings
        ? openAiEmbedder({
            baseURL: settings.embeddings.baseURL,
            model: settings.embeddings.model,
            ...(settings.embeddings.apiKey ? { apiKey: settings.embeddings.apiKey } : {}),
            ...(settings.embeddings.dimensions ? { dimensions: settings.embeddings.dimensions } : {}),
          })
        : undefined);
    const cache = embedder ? new SkillEmbeddingCache(path.join(options.home, "cache", "skills")) : undefined;
    const states = new WeakMap<CrowSession, SessionSkillState>();

    // A new session's skills are read once for its prompt hint and reused by its setup (same cwd, moments later).
    const loading = new Map<string, Promise<SessionSkills>>();
    const load = (cwd: string): Promise<SessionSkills> => {
      let pending = loading.get(cwd);
      if (!pending) {
        pending = loadSessionSkills({ workspace: cwd, home: options.home, dirs });
        loading.set(cwd, pending);
        // Forget it soon: a later session must see skills added meanwhile.
        const forget = () => setTimeout(() => loading.get(cwd) === pending && loading.delete(cwd), 5_000).unref();
        pending.then(forget, forget);
      }
      return pending;
    };

    api.registerPromptArgs(async ({ cwd }) => {
      const { skills } = await load(cwd);
      return { skills_hint: skillsHint(skills) };
    });

    api.onSession(async (session) => {
      const pending = load(session.cwd);
      const loaded = await pending;
      // Used by this session's hint and setup: the next session reads again (a skill added, a project trusted).
      if (loading.get(session.cwd) === pending) loading.delete(session.cwd);
      reportProblems(api, session, loaded.problems, "Some skills could not be loaded");
      if (loaded.untrusted) {
        const { root, count } = loaded.untrusted;
        session.notify(
          `${count} project skill${count === 1 ? "" : "s"} in ${root} ${count === 1 ? "is" : "are"} not offered ` +
            "to the model: this project is not trusted. If you trust its authors, run `crow skills trust` there " +
            "and start a new session.",
          "warning",
        );
      }
      const index = await createSkillIndex(loaded.skills);
      const state: SessionSkillState = {
        index,
        tools: skillTools(index),
        brought: new Map(),
        present: new Set(),
        injections: new WeakMap(),
        examined: new WeakSet(),
      };
      states.set(session, state);
      const controller = new AbortController();
      let skills: readonly Skill[] = loaded.skills;
      const external = withExternalSkills(session, loaded.skills, controller.signal)
        .then((joined) => {
          if (!joined || controller.signal.aborted) return;
          skills = joined.skills;
          state.index = joined;
          state.tools = skillTools(joined);
          api.log.debug(
            `session ${session.id}: ${joined.skills.length - loaded.skills.length} skills from MCP servers`,
          );
        })
        .catch((error: unknown) => api.log.warn(`session ${session.id}: external skills failed: ${String(error)}`))
        .finally(() => {
          // Settled: requests stop waiting for it (a session without MCP skills never waits at all).
          state.external = undefined;
        });
      state.external = external;
      if (!embedder) return () => controller.abort();
      state.hybrid = external
        .then(() => {
          if (skills.length === 0 || controller.signal.aborted) return undefined;
          return createSkillIndex(skills, {
            embedder,
            ...(cache ? { cache } : {}),
            signal: controller.signal,
          }).then((hybrid) => {
            if (controller.signal.aborted) return;
            reportProblems(api, session, hybrid.problems, "Skill search uses keywords only");
            if (!hybrid.dense) return;
            state.index = hybrid;
            state.tools = skillTools(hybrid);
            api.log.debug(`session ${session.id}: ${hybrid.skills.length} skills embedded; hybrid search on`);
          });
        })
        .catch((error: unknown) => api.log.warn(`session ${session.id}: skill embeddings failed: ${String(error)}`))
        .finally(() => {
          state.hybrid = undefined;
        });
      return () => controller.abort();
    });

    const tool = (session: CrowSession, name: (typeof SKILL_TOOLS)[number]): SkillTool | undefined =>
      states.get(session)?.tools.find((t) => t.definition.function.name === name);

    api.registerTool({
      name: "discover_skills",
      description:
        "Search the installed skills (packaged instructions, scripts and references for specialised tasks) and " +
        "list the best matches with their descriptions. Describe the task in a few words.",
      parameters: api.z.object({
        query: api.z.string().describe("What you need to do, e.g. 'fill in a PDF form'."),
        limit: api.z.int().min(1).max(20).default(5).describe("Results wanted (default 5)."),
      }),
      kind: "search",
      readOnly: true,
      execute: async (args, { session, signal }) => {
        const external = states.get(session)?.external;
        if (external) await settledWithin(external, EXTERNAL_WAIT_MS, signal);
        const pending = states.get(session)?.hybrid;
        if (pending) await settledWithin(pending, HYBRID_WAIT_MS, signal);
        const found = tool(session, "discover_skills");
        return found ? found.execute(args, signal) : { content: "No skills are installed.", isError: true };
      },
    });

    api.registerTool({
      name: "get_skill_details",
      description:
        "Read a skill's full instructions (its SKILL.md) and the list of its scripts, references and assets. " +
        "Use a name returned by discover_skills.",
      parameters: api.z.object({
        name: api.z.string().describe("The skill's name, e.g. 'pdf-processing'."),
      }),
      kind: "read",
      readOnly: true,
      execute: async (args, { session, signal }) => {
        const state = states.get(session);
        const found = tool(session, "get_skill_details");
        if (!state || !found) return { content: "No skills are installed.", isError: true };
        // Never the same instructions twice in one context.
        if (state.present.has(args.name)) {
          return `The instructions of skill "${args.name}" are already in this conversation: follow them.`;
        }
        const result = await found.execute(args, signal);
        const skill = state.index.skills.find((s) => s.name === args.name);
        // An external skill was just read (and cached): keep its instructions for after a compaction.
        if (!result.isError && skill) state.brought.set(skill.name, await loadedSkill(skill, signal));
        return result;
      },
    });

    // Each skill is a `/name` command in the editor; using it brings the skill into that turn (see before_request).
    api.registerSessionCommands((session) =>
      (states.get(session)?.index.skills ?? []).flatMap((skill) =>
        skill.load
          ? []
          : [
              {
                name: skill.name,
                description: `Skill: ${skill.description}`,
                hint: "what to do",
                prompt: true,
              },
            ],
      ),
    );

    api.on("before_request", (draft, { session, signal }) => {
      // Waits only while the servers' listing is on its way; otherwise the request is shaped at once.
      const external = states.get(session)?.external;
      return external
        ? settledWithin(external, EXTERNAL_WAIT_MS, signal).then(() => shapeRequest(draft, session))
        : shapeRequest(draft, session);
    });

    /** The request with the skill tools offered or not, triggered skills injected, and skills lost to compaction back. */
    const shapeRequest = (draft: RequestDraft, session: CrowSession): RequestDraft => {
      const state = states.get(session);
      // No skills: no tools to offer either (progressive disclosure costs nothing when there is nothing to show).
      const tools =
        state && state.index.skills.length > 0
          ? draft.tools
          : draft.tools.filter((t) => !(SKILL_TOOLS as readonly string[]).includes(t.function.name));
      if (!state || state.index.skills.length === 0) return { ...draft, tools };
      const latest = draft.messages.findLast((m) => m.role === "user");
      if (latest && !state.examined.has(latest)) {
        state.examined.add(latest);
        const text = contentText(latest.content);
        const matches = [...commandMatch(state.index.skills, text), ...matchTriggers(state.index, text)].filter(
          (m, i, all) => !state.present.has(m.skill.name) && all.findIndex((o) => o.skill === m.skill) === i,
        );
        if (matches.length > 0) {
          for (const m of matches) {
            state.brought.set(m.skill.name, m.skill);
          }
          state.injections.set(latest, triggerInjection(matches));
          api.log.debug(`session ${session.id}: trigger → ${matches.map((m) => m.skill.name).join(", ")}`);
        }
      }
      const view = () =>
        draft.messages.map((m) => {
          const injection = state.injections.get(m);
          return injection ? withInjection(m, injection) : m;
        });
      let messages = view();
      state.present = skillsInContext(messages, state.brought.values());
      // A compaction summarised away a skill brought in earlier: it comes back, attached to the first user message
      // of the compacted history so that later requests keep the same prefix.
      const missing = [...state.brought.values()].filter((skill) => !state.present.has(skill.name));
      const first = draft.messages.find((m) => m.role === "user");
      if (missing.length > 0 && first) {
        const earlier = state.injections.get(first);
        const restore = skillReinjection(missing);
        state.injections.set(first, earlier ? `${earlier}\n\n${restore}` : restore);
        for (const skill of missing) state.present.add(skill.name);
        api.log.debug(`session ${session.id}: skills restored after compaction: ${missing.map((s) => s.name)}`);
        messages = view();
      }
      return { ...draft, tools, messages };
    };
  };
}

/** The skill a prompt `/skill-name …` names, as a trigger match. */
function commandMatch(skills: readonly Skill[], text: string): TriggerMatch[] {
  const name = /^\/([a-z0-9-]+)(?:\s|$)/.exec(text.trim())?.[1];
  const skill = name ? skills.find((s) => s.name === name) : undefined;
  return skill ? [{ skill, trigger: `/${skill.name}` }] : [];
}

/** Logs every problem; tells the user about errors and warnings (overrides are only logged). */
function reportProblems(
  api: ExtensionAPI,
  session: CrowSession,
  problems: readonly SkillProblem[],
  title: string,
): void {
  if (problems.length === 0) return;
  api.log.info(`session ${session.id}: skill problems:\n${describeProblems(problems)}`);
  const shown = problems.filter((p) => p.severity !== "info");
  if (shown.length > 0) session.notify(`${title}:\n${describeProblems(shown)}`, "warning");
}

/** Resolves when `promise` settles, `ms` pass, or `signal` aborts, whichever comes first. */
function settledWithin(promise: Promise<unknown>, ms: number, signal: AbortSignal): Promise<void> {
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
