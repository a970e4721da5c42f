/**
 * Diagnostics for the agent. stdout belongs to ACP, so every log line goes to stderr. Level comes from CROW_LOG
 * (error | warn | info | debug; default warn).
 *
 * CROW_LOG is the one setting read here rather than by the configuration loader (config/load.ts): the log must work
 * before the configuration loads (its errors are logged) and when it fails to. It is read on every line, so a
 * `.env` CROW_LOG, which the loaded configuration copies into the environment (tools/child-env.ts), applies from then.
 */
const LEVELS = { error: 0, warn: 1, info: 2, debug: 3 } as const;
type Level = keyof typeof LEVELS;

/** Whether CROW_LOG is set at all (`crow run` then shows the agent's log instead of only keeping its tail). */
export function logRequested(env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(env.CROW_LOG);
}

function threshold(): number {
  const wanted = process.env.CROW_LOG as Level | undefined;
  return wanted && wanted in LEVELS ? LEVELS[wanted] : LEVELS.warn;
}

let sink: ((line: string) => void) | undefined;

/**
 * Sends the log lines to `to` instead of stderr (undefined: back to stderr). `crow run` hosts the agent in its own
 * process and keeps the agent's log out of the conversation on the terminal.
 */
export function routeLog(to: ((line: string) => void) | undefined): void {
  sink = to;
}

function write(level: Level, message: string, detail?: unknown): void {
  if (LEVELS[level] > threshold()) return;
  const suffix =
    detail === undefined
      ? ""
      : ` ${detail instanceof Error ? (detail.stack ?? detail.message) : JSON.stringify(detail)}`;
  const line = `[crow] ${level}: ${message}${suffix}\n`;
  if (sink) sink(line);
  else process.stderr.write(line);
}

export const log = {
  error: (message: string, detail?: unknown) => write("error", message, detail),
  warn: (message: string, detail?: unknown) => write("warn", message, detail),
  info: (message: string, detail?: unknown) => write("info", message, detail),
  debug: (message: string, detail?: unknown) => write("debug", message, detail),
};
