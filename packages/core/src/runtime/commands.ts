/**
 * Slash commands: `/name args` typed as a whole prompt. Every command, the built-in ones included, is an extension
 * registration; this file parses and dispatches. A command that throws answers with its error.
 */

import { type CommandInfo, type CrowSession, SessionBusyError } from "../api/types.js";
import { errorText } from "../error-text.js";
import type { ExtensionRegistry } from "../extensions/registry.js";

/** Every registered command as advertised (`available_commands_update`), then the session's own (its skills). */
export function commandList(registry: ExtensionRegistry, session?: CrowSession): CommandInfo[] {
  const list: CommandInfo[] = [...registry.commands].map(([name, { value }]) => ({
    name,
    description: value.description,
    ...(value.hint ? { hint: value.hint } : {}),
  }));
  if (!session) return list;
  const names = new Set(list.map((c) => c.name));
  for (const command of registry.sessionCommandsFor(session)) {
    if (names.has(command.name)) continue;
    names.add(command.name);
    list.push(command);
  }
  return list;
}

/** `/name args` → `{name, args}`; undefined when the text is not a slash command. */
export function parseSlashCommand(text: string): { name: string; args: string } | undefined {
  const match = /^\/([a-zA-Z0-9_-]+)(?:\s+([\s\S]*))?$/.exec(text.trim());
  if (!match?.[1]) return undefined;
  return { name: match[1], args: (match[2] ?? "").trim() };
}

/** Runs a command of the session and returns the text to answer with. Never rejects. */
export async function runCommand(
  registry: ExtensionRegistry,
  session: CrowSession,
  name: string,
  args: string,
): Promise<string> {
  const found = registry.commands.get(name);
  if (!found) return `Unknown command: /${name}. Type /help for available commands.`;
  try {
    const answer = await found.value.run(args, { session, crow: session.crow, commands: session.commands() });
    return answer ?? "";
  } catch (error) {
    if (error instanceof SessionBusyError) return error.message;
    return `/${name} failed: ${errorText(error)}`;
  }
}
