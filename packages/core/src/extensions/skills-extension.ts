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
 * This file wires settings, tools, commands and hooks; a session's state and setup are in skills-extension-session.ts, the
 * request shaping (triggers, compaction) in skills-extension-request.ts.
 */
import path from "node:path";
import type { CrowSession } from "../api/types.js";
import { SkillEmbeddingCache } from "../skills/cache.js";
import { type Embedder, openAiEmbedder } from "../skills/embedder.js";
import { loadedSkill } from "../skills/external.js";
import { type SkillTool, skillsHint } from "../skills/tools.js";
import type { Extension, ExtensionAPI } from "./api.js";
import { shapeRequest } from "./skills-extension-request.js";
import {
  EXTERNAL_WAIT_MS,
  HYBRID_WAIT_MS,
  openSessionSkills,
  type SessionSkillState,
  SessionSkillsLoader,
  SKILL_TOOLS,
  type SkillRerank,
  settledWithin,
} from "./skills-extension-session.js";

export { SKILL_TOOLS };

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

/** The skills extension. `createRuntime` loads it as the built-in `skills`. */
export function skillsExtension(options: SkillsExtensionOptions): Extension {
  return (api) => {
    const settings = options.settings ?? skillsSettings(api.config.skills);
    if (settings.enabled === false) return;
    const dirs = (settings.dirs ?? []).map((dir) => path.resolve(options.home, dir));
    const rerank = skillRerank(options, settings);
    const states = new WeakMap<CrowSession, SessionSkillState>();
    const loader = new SessionSkillsLoader({ home: options.home, dirs });

    api.registerPromptArgs(async ({ cwd }) => {
      const { skills } = await loader.load(cwd);
      return { skills_hint: skillsHint(skills) };
    });

    api.onSession(async (session) => {
      const { state, close } = await openSessionSkills(api.log, session, await loader.take(session.cwd), rerank);
      states.set(session, state);
      return close;
    });

    registerSkillTools(api, states);

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
        ? settledWithin(external, EXTERNAL_WAIT_MS, signal).then(() =>
            shapeRequest(api.log, session, states.get(session), draft),
          )
        : shapeRequest(api.log, session, states.get(session), draft);
    });
  };
}

/** The dense re-rank: the given embedder, else one for `settings.embeddings`; none without either. */
function skillRerank(options: SkillsExtensionOptions, settings: SkillsSettings): SkillRerank | undefined {
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
  return embedder
    ? { embedder, cache: new SkillEmbeddingCache(path.join(options.home, "cache", "skills")) }
    : undefined;
}

/**
 * Registers `discover_skills` and `get_skill_details`, which answer from the session's current index (`states`):
 * both wait a bounded time for skills still joining it.
 */
function registerSkillTools(api: ExtensionAPI, states: WeakMap<CrowSession, SessionSkillState>): void {
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
}
