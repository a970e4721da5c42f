/**
 * The agent's log: stdout belongs to ACP, so every line goes to stderr (or where `routeLog` says), as
 * `[crow] level: …`. Level from CROW_LOG (error | warn | info | debug; default warn).
 *
 * CROW_LOG is the one setting read here rather than by the configuration loader (config/load.ts): the log must work
 * before the configuration loads (its errors are logged) and when it fails to. It is read on every line, so a
 * `.env` CROW_LOG, which the loaded configuration copies into the environment (tools/child-env.ts), applies from then.
 */
import { createLog } from "@crow/util";

/** Whether CROW_LOG is set at all (`crow run` then shows the agent's log instead of only keeping its tail). */
export function logRequested(env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(env.CROW_LOG);
}

let sink: ((line: string) => void) | undefined;

/**
 * Sends the log lines to `to` instead of stderr (undefined: back to stderr). `crow run` hosts the agent in its own
 * process and keeps the agent's log out of the conversation on the terminal.
 */
export function routeLog(to: ((line: string) => void) | undefined): void {
  sink = to;
}

export const log = createLog({
  name: "crow",
  level: () => process.env.CROW_LOG,
  write: (line) => {
    if (sink) sink(line);
    else process.stderr.write(line);
  },
});
