/**
 * The agent's log: stdout belongs to ACP, so every line goes to stderr (or where `routeLog` says), as
 * `[crow] level: …`. Level from CROW_LOG (error | warn | info | debug; default warn).
 */
import { createLog } from "@crow/util";

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
