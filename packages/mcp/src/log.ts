/**
 * crow-mcp's log: stdout belongs to the MCP protocol when serving stdio, so every line goes to stderr, as
 * `[crow-mcp] level: …`. The level is CROW_MCP_LOG's (error | warn | info | debug; default warn), which the settings
 * loader (settings.ts, applied by args.ts) sets once at start; until then, and in a process that is not crow-mcp
 * (the agent loads some of crow-mcp's modules), it is warn.
 */
import { createLog } from "@crow/util";

/** The levels of the log, quietest first. */
export type LogLevel = "error" | "warn" | "info" | "debug";

let level: LogLevel | undefined;

/** Sets the log's level (undefined: the default, warn). */
export function setLogLevel(wanted: LogLevel | undefined): void {
  level = wanted;
}

export const log = createLog({ name: "crow-mcp", level: () => level });
