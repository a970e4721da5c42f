/**
 * crow-mcp's environment variables, read in one place, once, at start (issue 51: "every environment variable read in
 * one loader"). {@link readSettings} checks each value and says which variable is wrong and what it accepts; args.ts
 * turns that into a usage error (status 2) before anything is served, and hands the typed settings on: the server's
 * options (terminal, web, language servers), the log's level and the sandbox's bwrap.
 *
 * An empty value counts as unset, as it always did (`CROW_LSP=` turns the test runner's `off` back into the default).
 * What is not a setting stays where it is used: the environment passed on to child processes (child-env.ts, with the
 * `CROW_CHILD_ENV_*` lists that travel inside it), PATH lookups, and what Node reads before crow-mcp's code runs
 * (NODE_OPTIONS, the compile cache's directories).
 */
import type { LogLevel } from "./log.js";

/** What crow-mcp's environment sets; a field is absent where its variable is unset (the default applies). */
export interface EnvSettings {
  /** CROW_TERMINAL_SOFT_TIMEOUT: seconds without output before a command returns partial output. */
  softTimeoutSeconds?: number;
  /** CROW_WEB_TIMEOUT (seconds), in milliseconds: web_search's and web_fetch's timeout. */
  webTimeoutMs?: number;
  /** SEARXNG_URL: web_search's SearXNG. */
  searxngUrl?: string;
  /** CROW_LSP=off: no language server checks any change, whatever a session asks. */
  lspOff?: boolean;
  /** CROW_LSP_WAIT (seconds), in milliseconds: the wait for a warm language server's diagnostics. */
  lspWaitMs?: number;
  /** CROW_LSP_START_WAIT (seconds), in milliseconds: the wait while a language server starts. */
  lspStartWaitMs?: number;
  /** CROW_BWRAP: the bubblewrap to confine with (a name looked up on PATH, or a path). */
  bwrap?: string;
  /** CROW_MCP_TOKEN: the token `--http` clients must send. */
  token?: string;
  /** CROW_MCP_LOG: the level of the log on stderr. */
  logLevel?: LogLevel;
}

/** Every variable {@link readSettings} reads, with what it accepts (the wording of its error). */
export const ENV_VARIABLES = {
  SEARXNG_URL: "an http or https URL",
  CROW_WEB_TIMEOUT: "a positive number of seconds",
  CROW_TERMINAL_SOFT_TIMEOUT: "a positive number of seconds",
  CROW_MCP_TOKEN: "the token --http clients must send",
  CROW_MCP_LOG: "error, warn, info or debug",
  CROW_LSP: "on or off",
  CROW_LSP_WAIT: "a positive number of seconds",
  CROW_LSP_START_WAIT: "a positive number of seconds",
  CROW_BWRAP: "the bubblewrap to run: a name looked up on PATH, or a path",
} as const;

type Variable = keyof typeof ENV_VARIABLES;

/** A variable whose value crow-mcp does not accept; the message names it, its value and what it accepts. */
export class SettingsError extends Error {
  override name = "SettingsError";
  constructor(
    readonly variable: Variable,
    value: string,
  ) {
    super(`${variable} must be ${ENV_VARIABLES[variable]}, got ${JSON.stringify(value)}`);
  }
}

const LOG_LEVELS: readonly LogLevel[] = ["error", "warn", "info", "debug"];

/**
 * The settings of environment `env` (crow-mcp passes `process.env`, once). Throws {@link SettingsError} for the first
 * value it does not accept: a number that is not a positive number, a word not among those accepted, a URL that is not
 * one.
 */
export function readSettings(env: Readonly<Record<string, string | undefined>>): EnvSettings {
  const given = (name: Variable): string | undefined => {
    const value = env[name];
    return value === undefined || value === "" ? undefined : value;
  };
  const seconds = (name: Variable): number | undefined => {
    const raw = given(name);
    if (raw === undefined) return undefined;
    const value = Number(raw);
    if (!Number.isFinite(value) || value <= 0) throw new SettingsError(name, raw);
    return value;
  };
  const milliseconds = (name: Variable): number | undefined => {
    const value = seconds(name);
    return value === undefined ? undefined : value * 1000;
  };
  const settings: EnvSettings = {};
  const soft = seconds("CROW_TERMINAL_SOFT_TIMEOUT");
  if (soft !== undefined) settings.softTimeoutSeconds = soft;
  const web = milliseconds("CROW_WEB_TIMEOUT");
  if (web !== undefined) settings.webTimeoutMs = web;
  const searxng = given("SEARXNG_URL");
  if (searxng !== undefined) {
    const url = URL.canParse(searxng) ? new URL(searxng) : undefined;
    if (url?.protocol !== "http:" && url?.protocol !== "https:") throw new SettingsError("SEARXNG_URL", searxng);
    settings.searxngUrl = searxng;
  }
  const lsp = given("CROW_LSP");
  if (lsp !== undefined && lsp !== "on" && lsp !== "off") throw new SettingsError("CROW_LSP", lsp);
  if (lsp === "off") settings.lspOff = true;
  const wait = milliseconds("CROW_LSP_WAIT");
  if (wait !== undefined) settings.lspWaitMs = wait;
  const startWait = milliseconds("CROW_LSP_START_WAIT");
  if (startWait !== undefined) settings.lspStartWaitMs = startWait;
  const bwrap = given("CROW_BWRAP");
  if (bwrap !== undefined) settings.bwrap = bwrap;
  const token = given("CROW_MCP_TOKEN");
  if (token !== undefined) settings.token = token;
  const level = given("CROW_MCP_LOG");
  if (level !== undefined) {
    const known = LOG_LEVELS.find((each) => each === level);
    if (!known) throw new SettingsError("CROW_MCP_LOG", level);
    settings.logLevel = known;
  }
  return settings;
}
