/** The system prompts of the runtime's sessions: a new session's (from the `systemPrompt` option), a loaded one's fallback. */
import type { Logger } from "../extensions/api.js";
import type { ExtensionRegistry } from "../extensions/registry.js";
import { NO_AGENTS_MD, prepareSystemPrompt } from "../prompt/system-prompt.js";
import { DEFAULT_SYSTEM_PROMPT, renderTemplate } from "../prompt/template.js";
import type { Store } from "../store/types.js";
import type { SystemPromptOption } from "./options.js";

/**
 * The built-in prompt without reading the disk (no tree, no AGENTS.md): for loaded sessions that have no stored
 * prompt (made before prompts were stored).
 */
export function defaultSystemPrompt(cwd: string, now: Date = new Date()): string {
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

/** A new session's system prompt, and the stored template's id and arguments when it was rendered from one. */
export interface SessionSystemPrompt {
  systemPrompt: string;
  promptId: string | null;
  promptArgs: Record<string, unknown> | null;
  /** A problem met while rendering it (a user template that failed), already logged. */
  warning?: string;
}

/**
 * The system prompt of a new session in `cwd`, as the runtime's `systemPrompt` option says; `shownPaths` are the
 * names the built-in or user template gives the workspace and the tree's root (`NewSessionOptions.promptPaths`); a
 * function option gets `cwd` as before.
 */
export async function sessionSystemPrompt(
  choice: SystemPromptOption | undefined,
  cwd: string,
  additionalDirectories: readonly string[],
  runtime: { registry: ExtensionRegistry; home: string; store: Store | undefined; logger: Logger },
  shownPaths?: { workspace: string; treeRoot: string },
): Promise<SessionSystemPrompt> {
  const { registry, home, store, logger } = runtime;
  choice ??= {};
  if (typeof choice === "string") return { systemPrompt: choice, promptId: null, promptArgs: null };
  if (typeof choice === "function") return { systemPrompt: await choice(cwd), promptId: null, promptArgs: null };
  // Extensions' variables (the skills extension's `skills_hint`), then the host's own hint.
  const { skills_hint: extensionHint, ...extraArgs } = await registry.promptArgsFor(cwd);
  const skillsHint = [typeof extensionHint === "string" ? extensionHint : "", choice.skillsHint ?? ""]
    .filter((hint) => hint !== "")
    .join("\n");
  const prepared = await prepareSystemPrompt(cwd, {
    additionalDirectories,
    home: choice.home ?? home,
    ...(store ? { store } : {}),
    ...(skillsHint ? { skillsHint } : {}),
    ...(choice.hidden ? { hidden: choice.hidden } : {}),
    ...(shownPaths ? { shownPaths } : {}),
    extraArgs,
  });
  if (prepared.warning) logger.warn(prepared.warning);
  const { systemPrompt, promptId, promptArgs, warning } = prepared;
  return { systemPrompt, promptId, promptArgs, ...(warning ? { warning } : {}) };
}
