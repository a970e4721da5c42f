/**
 * Slash commands: recognised only when a prompt is a single text block starting with `/name` (as upstream), and
 * answered with an agent message, never sent to the model. Built in: `/compact`, `/help`, `/clear`, `/stop`
 * (advertised with `available_commands_update`); extensions add theirs with their issue.
 */
import type { CompactionResult } from "@crow/core";
import { compactedText } from "../session/compaction.js";
import { TurnBusyError } from "../session/modes.js";
import type { CommandInfo } from "./translate.js";

export const COMMANDS: readonly CommandInfo[] = [
  { name: "compact", description: "Summarize the conversation so far to free context (the full history is archived)" },
  { name: "clear", description: "Start a fresh context in this session (the history so far is archived)" },
  { name: "stop", description: "Stop the running prompt turn" },
  { name: "help", description: "Show available slash commands" },
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

/** What the built-in commands act on (a Session). */
export interface CommandSession {
  cancel(): boolean;
  compact(): Promise<CompactionResult>;
  clear(): Promise<string | undefined>;
}

/**
 * Runs a slash command and returns the text to answer with. `/stop` runs on its own, outside the turn it stops
 * (upstream's ran inside the prompt task it meant to cancel); `/compact` and `/clear` refuse while a turn runs.
 */
export async function runSlashCommand(
  command: { name: string; args: string },
  session: CommandSession,
): Promise<string> {
  try {
    switch (command.name) {
      case "help":
        return helpText();
      case "stop":
        return session.cancel() ? "Stopped the running turn." : "Nothing is running.";
      case "compact": {
        const result = await session.compact();
        if (!result.compacted) return result.message;
        return compactedText(result.messagesBefore, result.messagesAfter, result.archiveId);
      }
      case "clear": {
        const archiveId = await session.clear();
        return archiveId
          ? `Cleared the context. The previous conversation is archived as ${archiveId}.`
          : "Cleared the context.";
      }
      default:
        return `Unknown command: /${command.name}. Type /help for available commands.`;
    }
  } catch (error) {
    if (error instanceof TurnBusyError) return error.message;
    return `/${command.name} failed: ${error instanceof Error ? error.message : String(error)}`;
  }
}
