/**
 * Loading the configuration: `<home>/.env` into the lookup environment (real variables win), `<home>/config.yaml`
 * parsed, interpolated and validated, then merged over the environment fallbacks. Synchronous: it runs once at
 * startup, before anything else needs it. Every problem is a `ConfigError` naming the file and key.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { errorText, type RetryPolicy } from "@crow/core";
import { DEFAULT_MAX_STEPS_PER_TURN } from "@crow/core/internal";
import { readSettings, SettingsError } from "@crow/mcp/settings";
import { parseDotenv } from "./dotenv.js";
import { envInteger } from "./env.js";
import { ConfigError, displayPath, failIn, keyPath } from "./errors.js";
import { configFiles, crowHome, expandTilde, homeDir } from "./home.js";
import { describeProblems, type InterpolationProblem, interpolate } from "./interpolate.js";
import { languageServersField } from "./language-servers.js";
import { type ModelSources, modelList } from "./model-list.js";
import { type ConfigFile, configFileSchema, issueMessage, type McpServerEntry } from "./schema.js";
import { modelFrom, variableOrigin } from "./sources.js";
import type { AgentConfig, ConfigMcpServer, ExtensionEntry, SkillsConfig } from "./types.js";
import { upstreamKeyProblems } from "./upstream-keys.js";
import { yaml } from "./yaml.js";

export interface LoadOptions {
  /** The config directory (default: `crowHome(env)`). */
  home?: string;
}

function readText(file: string, shown: string): string | undefined {
  if (!existsSync(file)) return undefined;
  try {
    return readFileSync(file, "utf8");
  } catch (error) {
    throw new ConfigError(`${shown}: cannot read: ${errorText(error)}`);
  }
}

/** Parses YAML; syntax errors become `file:line:col: invalid YAML: …`. */
function parseYaml(text: string, shown: string): unknown {
  // Loaded only when there is a config.yaml (see yaml.ts).
  const { parseDocument } = yaml();
  const doc = parseDocument(text, { prettyErrors: true, uniqueKeys: true });
  const error = doc.errors[0];
  if (error) {
    const pos = error.linePos?.[0];
    const where = pos ? `${shown}:${pos.line}:${pos.col}` : shown;
    const message = (error.message.split("\n")[0] ?? "").replace(/ at line \d+, column \d+:?$/, "");
    throw new ConfigError(`${where}: invalid YAML: ${message}`);
  }
  return doc.toJS();
}

/** Validates the interpolated tree; every issue becomes one `key.path: message` line. */
function validate(tree: unknown, shown: string): ConfigFile {
  if (tree === null || tree === undefined) return {};
  if (typeof tree !== "object" || Array.isArray(tree)) {
    failIn(shown, [`expected a mapping of keys at the top level, got ${Array.isArray(tree) ? "a list" : "a scalar"}`]);
  }
  const { problems, rest } = upstreamKeyProblems(tree as Record<string, unknown>);
  const result = configFileSchema.safeParse(rest, { reportInput: true });
  if (result.success && problems.length === 0) return result.data;
  const lines = [...problems];
  for (const issue of result.error?.issues ?? []) {
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) lines.push(`${keyPath([...issue.path, key])}: ${issue.message}`);
    } else {
      lines.push(`${keyPath(issue.path)}: ${issueMessage(issue)}`);
    }
  }
  failIn(shown, lines);
}

/** Upstream's `crow-mcp` entry runs the Python server through uv; the built-in of this installation replaces it. */
function isUpstreamCrowMcp(name: string, server: McpServerEntry): boolean {
  if (name !== "crow-mcp" || server.url) return false;
  const command = path.basename(server.command ?? "");
  return (
    command === "crow-mcp" || ((command === "uvx" || command === "uv") && (server.args ?? []).includes("crow-mcp"))
  );
}

function mcpServers(entries: ConfigFile["mcpServers"], notes: string[]): Record<string, ConfigMcpServer> {
  const out: Record<string, ConfigMcpServer> = {};
  for (const [name, entry] of Object.entries(entries ?? {})) {
    if (entry.disabled) continue;
    if (isUpstreamCrowMcp(name, entry)) {
      notes.push(
        `mcpServers.crow-mcp (${entry.command} ${(entry.args ?? []).join(" ")}) runs upstream's Python server; using the built-in crow-mcp instead`,
      );
      continue;
    }
    const { disabled: _disabled, ...server } = entry;
    out[name] = server;
  }
  return out;
}

/**
 * The store URI: `CROW_DB_URI`, else `db_uri`, else `DATABASE_PATH` (upstream's fallback), else SQLite at
 * `<home>/crow.db` (`sqlite:////abs/crow.db`, SQLAlchemy's absolute form). Passed on as written: the store parses it
 * (relative SQLite paths against the config home) and reports a malformed one when it opens.
 */
function databaseUri(raw: string | undefined, home: string): string {
  return raw || `sqlite:///${path.join(home, "crow.db")}`;
}

/** The configuration's sources: `.env` and config.yaml (parsed, interpolated, validated), and where variables came from. */
interface ConfigSources extends ModelSources {
  files: { config: string; dotenv: string };
  dotenv: Record<string, string>;
}

/** Reads `<home>/.env` and `<home>/config.yaml`; a `ConfigError` names every problem of either. */
function readSources(env: NodeJS.ProcessEnv, home: string): ConfigSources {
  const files = configFiles(home);
  const show = (file: string) => displayPath(file, homeDir(env));
  const dotenvText = readText(files.dotenv, show(files.dotenv));
  const dotenv = dotenvText === undefined ? {} : parseDotenv(dotenvText, show(files.dotenv));
  const lookup: Record<string, string | undefined> = { ...dotenv };
  for (const [key, value] of Object.entries(env)) if (value !== undefined) lookup[key] = value;

  const origin = variableOrigin(env, show(files.dotenv));
  const yamlText = readText(files.config, show(files.config));
  let file: ConfigFile = {};
  let raw: unknown;
  if (yamlText !== undefined) {
    const shown = show(files.config);
    const problems: InterpolationProblem[] = [];
    raw = parseYaml(yamlText, shown);
    const tree = interpolate(raw, lookup, problems);
    if (problems.length > 0) failIn(shown, describeProblems(problems));
    file = validate(tree, shown);
  }
  const shown = yamlText === undefined ? undefined : show(files.config);
  return { files, dotenv, env, lookup, origin, file, raw, shown };
}

/** config.yaml's `extensions`: relative and ~ paths resolved against the config directory, bare names kept. */
function extensionEntries(file: ConfigFile, home: string, env: NodeJS.ProcessEnv): ExtensionEntry[] {
  return (file.extensions ?? []).map((entry) => {
    const spec = typeof entry === "string" ? { module: entry, options: {} } : { options: {}, ...entry };
    const local = spec.module.startsWith(".") || spec.module.startsWith("~") || path.isAbsolute(spec.module);
    return {
      module: local ? path.resolve(home, expandTilde(spec.module, env)) : spec.module,
      options: spec.options ?? {},
    };
  });
}

/** config.yaml's `skills`: directories resolved against the config directory, the embeddings endpoint without a trailing slash. */
function skillsConfig(file: ConfigFile, home: string, env: NodeJS.ProcessEnv): SkillsConfig {
  const skills = file.skills ?? {};
  const embeddings = skills.embeddings;
  return {
    enabled: skills.enabled ?? true,
    dirs: (skills.dirs ?? []).map((dir) => path.resolve(home, expandTilde(dir, env))),
    ...(embeddings
      ? {
          embeddings: {
            baseURL: embeddings.base_url.replace(/\/+$/, ""),
            model: embeddings.model,
            ...(embeddings.api_key ? { apiKey: embeddings.api_key } : {}),
            ...(embeddings.dimensions !== undefined ? { dimensions: embeddings.dimensions } : {}),
          },
        }
      : {}),
  };
}

/** `max_retries_per_step` (or `CROW_MAX_RETRIES`) and `CROW_RETRY_BASE_MS`. */
function retryPolicy(file: ConfigFile, lookup: Record<string, string | undefined>): RetryPolicy {
  const retry: RetryPolicy = {};
  const maxRetries = envInteger(lookup, "CROW_MAX_RETRIES", 0) ?? file.max_retries_per_step;
  const baseDelayMs = envInteger(lookup, "CROW_RETRY_BASE_MS", 0);
  if (maxRetries !== undefined) retry.maxRetries = maxRetries;
  if (baseDelayMs !== undefined) retry.baseDelayMs = baseDelayMs;
  return retry;
}

/**
 * `MAX_COMPACT_TOKENS` of config.yaml, else `CROW_MAX_COMPACT_TOKENS` (environment or `.env`); absent when neither
 * is set (the threshold then follows the model's context window, see compaction-threshold.ts).
 */
function maxCompactTokens(file: ConfigFile, lookup: Record<string, string | undefined>): { maxCompactTokens?: number } {
  const value = file.MAX_COMPACT_TOKENS ?? envInteger(lookup, "CROW_MAX_COMPACT_TOKENS", 1);
  return value === undefined ? {} : { maxCompactTokens: value };
}

/**
 * crow-mcp's variables (CROW_WEB_TIMEOUT, SEARXNG_URL, CROW_LSP…) checked as crow-mcp checks them at its start: the
 * agent passes its environment and `.env` on to the toolserver, which refuses a bad value and does not start — the
 * model would then have no tools and the user only a log line. Here it is a config error, named, before anything runs.
 */
function checkToolserverSettings(lookup: Record<string, string | undefined>): void {
  try {
    readSettings(lookup);
  } catch (error) {
    if (!(error instanceof SettingsError)) throw error;
    throw new ConfigError(`${error.message} (crow-mcp reads it; set it in the environment or .env, or remove it).`);
  }
}

/**
 * Loads the configuration for `env` (default `process.env`; values from `.env` fill in variables it lacks).
 * Throws `ConfigError` with every problem found.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, options: LoadOptions = {}): AgentConfig {
  const home = options.home ?? crowHome(env);
  const sources = readSources(env, home);
  const { file, lookup, shown, files, dotenv } = sources;
  const { providers, models, model, contextWindow, notices } = modelList(sources);
  // MAX_TOKENS is every model's default; a model's own max_tokens (set by fileModels) wins.
  for (const entry of models) if (entry.maxTokens === undefined && file.MAX_TOKENS) entry.maxTokens = file.MAX_TOKENS;
  const notes: string[] = [];
  const from = model ? modelFrom(env, dotenv, shown ? files.config : undefined, models) : undefined;
  const searxngUrl = env.SEARXNG_URL?.trim() || dotenv.SEARXNG_URL?.trim();
  checkToolserverSettings(lookup);
  return {
    home,
    ...(shown ? { file: files.config } : {}),
    providers,
    models,
    ...(model ? { model } : {}),
    ...(from ? { modelFrom: from } : {}),
    dbUri: databaseUri(lookup.CROW_DB_URI?.trim() || file.db_uri || lookup.DATABASE_PATH?.trim(), home),
    mcpServers: mcpServers(file.mcpServers, notes),
    ...(file.defer_tools === false ? { deferTools: false } : {}),
    maxStepsPerTurn: envInteger(lookup, "CROW_MAX_STEPS", 1) ?? file.max_steps_per_turn ?? DEFAULT_MAX_STEPS_PER_TURN,
    ...(file.keep_tool_results !== undefined
      ? { keepToolResults: file.keep_tool_results === "all" ? Number.POSITIVE_INFINITY : file.keep_tool_results }
      : {}),
    retry: retryPolicy(file, lookup),
    contextWindow,
    ...maxCompactTokens(file, lookup),
    mode: file.mode ?? "code",
    sandbox: {
      enabled: file.sandbox?.enabled ?? "auto",
      writable: (file.sandbox?.writable ?? []).map((dir) => expandTilde(dir, env)),
      ...(file.sandbox?.network !== undefined ? { network: file.sandbox.network } : {}),
      ...(lookup.CROW_BWRAP ? { bwrap: lookup.CROW_BWRAP } : {}),
    },
    permissions: {
      allow: file.permissions?.allow ?? [],
      ask: file.permissions?.ask ?? [],
      deny: file.permissions?.deny ?? [],
    },
    skills: skillsConfig(file, home, env),
    extensions: extensionEntries(file, home, env),
    dotenv,
    childEnv: { allow: file.child_env?.allow ?? [] },
    ...languageServersField(file),
    ...((env.CROW_LSP ?? dotenv.CROW_LSP) === "off" ? { lspOffByEnv: true as const } : {}),
    ...(searxngUrl ? { searxngUrl } : {}),
    checkpoints: {
      enabled: file.checkpoints?.enabled ?? true,
      maxFileMb: file.checkpoints?.max_file_mb ?? 10,
      keepDays: file.checkpoints?.keep_days ?? 30,
    },
    notes,
    notices,
  };
}
