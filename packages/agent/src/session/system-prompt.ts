/**
 * The system prompt of a session: core's versioned Nunjucks template (the user's `~/.crow/prompts/system_prompt.njk`
 * or the built-in one) rendered with the workspace, its directory tree, AGENTS.md and the date. A new session
 * records the prompt version, the arguments and the rendered text, so its exact prompt can be reproduced.
 */
import { DEFAULT_SYSTEM_PROMPT, NO_AGENTS_MD, type PromptStore, prepareSystemPrompt, renderTemplate } from "@crow/core";
import { log } from "../log.js";

/** The fields of a new session's store row that describe its system prompt. */
export interface SessionPromptFields {
  promptId: string | null;
  promptArgs: Record<string, unknown>;
  systemPrompt: string;
}

export interface NewSessionPromptOptions {
  /** The Crow home directory (`config.home`): where `prompts/system_prompt.njk` is looked for. */
  home: string;
  /** Versions the template (`getOrCreatePrompt`). */
  store?: PromptStore;
  /** The skills extension's one-line hint (empty: none). */
  skillsHint?: string;
  now?: Date;
}

/**
 * Renders the system prompt of a new session in `cwd` and versions its template in the store. A user template that
 * does not render is reported in the log and replaced by the built-in one.
 */
export async function newSessionPrompt(cwd: string, options: NewSessionPromptOptions): Promise<SessionPromptFields> {
  const prepared = await prepareSystemPrompt(cwd, {
    home: options.home,
    ...(options.store ? { store: options.store } : {}),
    ...(options.skillsHint ? { skillsHint: options.skillsHint } : {}),
    ...(options.now ? { now: options.now } : {}),
  });
  if (prepared.warning) log.warn(prepared.warning);
  return { promptId: prepared.promptId, promptArgs: prepared.promptArgs, systemPrompt: prepared.systemPrompt };
}

/**
 * The built-in prompt without reading the disk (no tree, no AGENTS.md): for sessions made without a stored prompt
 * (tests, SDK sessions that pass none).
 */
export function systemPrompt(cwd: string, now: Date = new Date()): string {
  return renderTemplate(DEFAULT_SYSTEM_PROMPT, {
    workspace: cwd,
    display_tree: "(not listed)",
    agents_content: NO_AGENTS_MD,
    has_agents_md: false,
    date: now.toISOString().slice(0, 10),
    platform: process.platform,
    skills_hint: "",
  });
}
