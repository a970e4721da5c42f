/**
 * Diagnostics on stderr, one line each: `[name] level: message detail`. stdout belongs to the protocol (ACP for
 * `crow acp`, MCP for `crow-mcp` on stdio), so no log line ever goes there. Each executable makes its own log with its
 * name and the variable that sets its level (`CROW_LOG`, `CROW_MCP_LOG`).
 */
const LEVELS = { error: 0, warn: 1, info: 2, debug: 3 } as const;
type Level = keyof typeof LEVELS;

/** A log: a line at each level, written when the level asked for lets it through. */
export interface Log {
  error(message: string, detail?: unknown): void;
  warn(message: string, detail?: unknown): void;
  info(message: string, detail?: unknown): void;
  debug(message: string, detail?: unknown): void;
}

/** How a log is made. */
export interface LogOptions {
  /** What the line starts with, in brackets: `crow`, `crow-mcp`. */
  name: string;
  /** The level asked for (error | warn | info | debug; anything else means warn), asked at every line. */
  level: () => string | undefined;
  /** Where a line goes (default: stderr). */
  write?: (line: string) => void;
}

/** A {@link Log} writing `[name] level: message` lines. */
export function createLog(options: LogOptions): Log {
  const threshold = (): number => {
    const wanted = options.level();
    return wanted !== undefined && wanted in LEVELS ? LEVELS[wanted as Level] : LEVELS.warn;
  };
  const write = (level: Level, message: string, detail?: unknown): void => {
    if (LEVELS[level] > threshold()) return;
    const suffix =
      detail === undefined
        ? ""
        : ` ${detail instanceof Error ? (detail.stack ?? detail.message) : JSON.stringify(detail)}`;
    const line = `[${options.name}] ${level}: ${message}${suffix}\n`;
    if (options.write) options.write(line);
    else process.stderr.write(line);
  };
  return {
    error: (message, detail) => write("error", message, detail),
    warn: (message, detail) => write("warn", message, detail),
    info: (message, detail) => write("info", message, detail),
    debug: (message, detail) => write("debug", message, detail),
  };
}
