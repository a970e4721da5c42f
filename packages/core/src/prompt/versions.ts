/**
 * Built-in prompt versions, by name: `lean` (the default) and `full` (the fuller system prompt and tool texts of
 * earlier versions). A template selects the full tool texts with {@link FULL_TOOL_TEXTS_MARKER} as its first line;
 * the marker survives rendering, so a session rendered from it anywhere (a new session, `crow eval`'s trials, a
 * session loaded after a restart) gets the full texts of the built-in tools it has, and no other tools. A user's
 * template may use the marker too.
 */
import type { ToolDefinition } from "../messages.js";
import { FULL_SYSTEM_PROMPT_BODY, FULL_TOOL_DEFINITIONS } from "./full-texts.js";
import { DEFAULT_SYSTEM_PROMPT } from "./template.js";

/** The first line of a template whose sessions get the built-in tools' fuller texts. */
export const FULL_TOOL_TEXTS_MARKER = "<!-- crow: full tool texts -->";

/** The built-in prompt versions' templates, by name. */
export const BUILTIN_PROMPT_VERSIONS: Readonly<Record<string, string>> = {
  lean: DEFAULT_SYSTEM_PROMPT,
  full: `${FULL_TOOL_TEXTS_MARKER}\n${FULL_SYSTEM_PROMPT_BODY}`,
};

/** The template of the built-in prompt version `name` (`lean`, `full`), or undefined. */
export function builtinPromptVersion(name: string): string | undefined {
  return Object.hasOwn(BUILTIN_PROMPT_VERSIONS, name) ? BUILTIN_PROMPT_VERSIONS[name] : undefined;
}

/** Whether a session with this (rendered) system prompt gets the full tool texts. */
export function usesFullToolTexts(systemPrompt: string): boolean {
  return systemPrompt.startsWith(FULL_TOOL_TEXTS_MARKER);
}

/**
 * `definitions` with the built-in tools' fuller texts (description and parameters) in place of the lean ones. Other
 * tools, and a built-in whose parameters have changed since (a new parameter the old schema lacks), stay as they are.
 */
export function withFullToolTexts(definitions: readonly ToolDefinition[]): ToolDefinition[] {
  return definitions.map((definition) => {
    const full = FULL_TOOL_DEFINITIONS.get(definition.function.name);
    if (!full || !sameParameterNames(full.parameters, definition.function.parameters)) return definition;
    return { ...definition, function: { ...definition.function, ...full } };
  });
}

function propertyNames(schema: Record<string, unknown> | undefined): string {
  const properties = schema?.properties;
  return properties && typeof properties === "object" ? Object.keys(properties).sort().join(",") : "";
}

function sameParameterNames(a: Record<string, unknown> | undefined, b: Record<string, unknown> | undefined): boolean {
  return propertyNames(a) === propertyNames(b);
}
