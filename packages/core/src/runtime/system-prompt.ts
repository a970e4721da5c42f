import { NO_AGENTS_MD } from "../prompt/system-prompt.js";
import { DEFAULT_SYSTEM_PROMPT, renderTemplate } from "../prompt/template.js";

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
