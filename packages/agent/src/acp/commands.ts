/**
 * Slash commands: recognised only when a prompt is a single text block starting with `/name` (as upstream). The
 * compaction and extension commands come with their issues; this module keeps the registry and parsing.
 */
import type { CommandInfo } from "./translate.js";

export const COMMANDS: readonly CommandInfo[] = [
  { name: "help", description: "Show available slash commands" },
  { name: "stop", description: "Stop the running prompt turn" },
];

/** `/name args` → `{name, args}`; undefined when the text is not a slash command. */
export function parseSlashCommand(text: string): { name: string; args: string } | undefined {
  const match = /^\/([a-zA-Z0-9_-]+)(?:\s+([\s\S]*))?$/.exec(text.trim());
  if (!match?.[1]) return undefined;
  return { name: match[1], args: (match[2] ?? "").trim() };
}

/** The `/help` text. */
export function helpText(commands: readonly CommandInfo[] = COMMANDS): string {
  return `Available commands:\n${commands.map((c) => `  /${c.name} - ${c.description}`).join("\n")}`;
}
