/**
 * Loading the configuration: `<home>/.env` into the lookup environment (real variables win), `<home>/config.yaml`
 * parsed, interpolated and validated, then merged over the environment fallbacks. Synchronous: it runs once at
 * startup, before anything else needs it. Every problem is a `ConfigError` naming the file and key.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { DEFAULT_MAX_STEPS_PER_TURN, type RetryPolicy } from "@crow/core";
import { parseDotenv } from "./dotenv.js";
import { ENV_PROVIDER, envInteger, envModels } from "./env.js";
import { ConfigError, closest, displayPath, keyPath } from "./errors.js";
import { configFiles, crowHome, expandTilde, homeDir } from "./home.js";
import { describeProblems, type InterpolationProblem, interpolate } from "./interpolate.js";
import { type ConfigFile, configFileSchema, issueMessage, type McpServerEntry } from "./schema.js";
import { environmentOverride, envProvider, fileProviders, variableOrigin } from "./sources.js";
import type { AgentConfig, ConfigMcpServer, ExtensionEntry, ModelConfig, ProviderConfig } from "./types.js";
import { yaml } from "./yaml.js";

export interface LoadOptions {
  /** The config directory (default: `crowHome(env)`). */
  home?: string;
}

const DEFAULT_CONTEXT_WINDOW = 128_000;
/** The levels of `reasoning_effort: true` (OpenAI's, which most OpenAI-compatible servers accept). */
const DEFAULT_REASONING_EFFORTS = ["low", "medium", "high"];

function fail(file: string, lines: string[]): never {
  throw new ConfigError(lines.map((line) => `${file}: ${line}`).join("\n"));
}

function readText(file: string, shown: string): string | undefined {
  if (!existsSync(file)) return undefined;
  try {
    return readFileSync(file, "utf8");
  } catch (error) {
    throw new ConfigError(`${shown}: cannot read: ${(error as Error).message}`);
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
    fail(shown, [`expected a mapping of keys at the top level, got ${Array.isArray(tree) ? "a list" : "a scalar"}`]);
  }
  const result = configFileSchema.safeParse(tree, { reportInput: true });
  if (result.success) return result.data;
  const lines: string[] = [];
  for (const issue of result.error.issues) {
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) lines.push(`${keyPath([...issue.path, key])}: ${issue.message}`);
    } else {
      lines.push(`${keyPath(issue.path)}: ${issueMessage(issue)}`);
    }
  }
  fail(shown, lines);
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

/**
 * Loads the configuration for `env` (default `process.env`; values from `.env` fill in variables it lacks).
 * Throws `ConfigError` with every problem found.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, options: LoadOptions = {}): AgentConfig {
  const home = options.home ?? crowHome(env);
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
    if (problems.length > 0) fail(shown, describeProblems(problems));
    file = validate(tree, shown);
  }
  const shown = yamlText === undefined ? undefined : show(files.config);

  const windowFromEnv = envInteger(lookup, "CROW_CONTEXT_WINDOW", 1);
  const contextWindow = windowFromEnv ?? DEFAULT_CONTEXT_WINDOW;
  const windowAssumed = windowFromEnv === undefined;
  const providers: Record<string, ProviderConfig> = fileProviders(file.providers, raw, shown ?? "", origin);
  let models: ModelConfig[] = [];
  const fileModels = Object.entries(file.models ?? {});
  if (fileModels.length > 0) {
    const known = Object.keys(providers);
    const problems: string[] = [];
    for (const [name, entry] of fileModels) {
      if (!providers[entry.provider]) {
        const guess = closest(entry.provider, known);
        const list = known.length > 0 ? `known: ${known.join(", ")}` : "no providers are configured";
        problems.push(
          `models.${name}.provider: unknown provider "${entry.provider}" (${guess ? `did you mean "${guess}"? ` : ""}${list})`,
        );
      }
      const model: ModelConfig = {
        name,
        id: entry.model ?? name,
        provider: entry.provider,
        contextWindow: entry.context_window ?? contextWindow,
        ...(entry.context_window === undefined && windowAssumed ? { contextWindowAssumed: true as const } : {}),
      };
      const efforts = entry.reasoning_effort === true ? DEFAULT_REASONING_EFFORTS : entry.reasoning_effort;
      if (Array.isArray(efforts)) model.reasoningEfforts = [...new Set(efforts)];
      if (entry.price) {
        model.price = {
          input: entry.price.input,
          output: entry.price.output,
          currency: entry.price.currency ?? "USD",
          ...(entry.price.cached_input !== undefined ? { cachedInput: entry.price.cached_input } : {}),
        };
      }
      models.push(model);
    }
    if (problems.length > 0) fail(shown as string, problems);
  } else {
    // No models in the file (or no file): the environment's provider and models, as before config files existed.
    const provider = envProvider(lookup, origin);
    if (provider && !providers[ENV_PROVIDER]) providers[ENV_PROVIDER] = provider;
    models = envModels(lookup, contextWindow, windowAssumed);
  }

  let model = models[0]?.name;
  if (file.default_model !== undefined) {
    if (!models.some((m) => m.name === file.default_model)) {
      fail(shown as string, [
        `default_model: "${file.default_model}" is not one of models (${models.map((m) => m.name).join(", ") || "none configured"})`,
      ]);
    }
    model = file.default_model;
  }
  const notices: string[] = [];
  const override =
    fileModels.length > 0
      ? environmentOverride(
          env,
          lookup,
          origin,
          providers,
          models,
          model,
          { contextWindow, windowAssumed },
          shown as string,
        )
      : undefined;
  const wanted = fileModels.length > 0 && !override ? lookup.CROW_MODEL?.trim() : undefined;
  if (override) {
    model = override.model;
    notices.push(override.notice);
  } else if (wanted) {
    const found = models.find((m) => m.name === wanted) ?? models.find((m) => m.id === wanted);
    if (!found) {
      throw new ConfigError(
        `CROW_MODEL="${wanted}" is not a model of ${shown} (known: ${models.map((m) => m.name).join(", ")})`,
      );
    }
    if (found.name !== model && env.CROW_MODEL !== undefined) {
      notices.push(`CROW_MODEL is set in the environment: model "${found.name}" instead of "${model}" of ${shown}`);
    }
    model = found.name;
  }

  const notes: string[] = [];
  const retry: RetryPolicy = {};
  const maxRetries = envInteger(lookup, "CROW_MAX_RETRIES", 0) ?? file.max_retries_per_step;
  const baseDelayMs = envInteger(lookup, "CROW_RETRY_BASE_MS", 0);
  if (maxRetries !== undefined) retry.maxRetries = maxRetries;
  if (baseDelayMs !== undefined) retry.baseDelayMs = baseDelayMs;

  const skills = file.skills ?? {};
  const embeddings = skills.embeddings;
  const extensions: ExtensionEntry[] = (file.extensions ?? []).map((entry) => {
    const spec = typeof entry === "string" ? { module: entry, options: {} } : { options: {}, ...entry };
    // Relative and ~ paths are relative to the config directory; bare names are packages.
    const local = spec.module.startsWith(".") || spec.module.startsWith("~") || path.isAbsolute(spec.module);
    return {
      module: local ? path.resolve(home, expandTilde(spec.module, env)) : spec.module,
      options: spec.options ?? {},
    };
  });

  return {
    home,
    ...(shown ? { file: files.config } : {}),
    providers,
    models,
    ...(model ? { model } : {}),
    dbUri: databaseUri(lookup.CROW_DB_URI?.trim() || file.db_uri || lookup.DATABASE_PATH?.trim(), home),
    mcpServers: mcpServers(file.mcpServers, notes),
    maxStepsPerTurn: envInteger(lookup, "CROW_MAX_STEPS", 1) ?? file.max_steps_per_turn ?? DEFAULT_MAX_STEPS_PER_TURN,
    retry,
    contextWindow,
    ...(file.MAX_COMPACT_TOKENS !== undefined ? { maxCompactTokens: file.MAX_COMPACT_TOKENS } : {}),
    nStepsBackCompact: file.N_STEPS_BACK_COMPACT ?? 8,
    maxTokens: file.MAX_TOKENS ?? 38_192,
    toolNames: {
      terminal: file.TERMINAL_TOOL ?? "terminal",
      write: file.WRITE_TOOL ?? "write",
      read: file.READ_TOOL ?? "read",
      edit: file.EDIT_TOOL ?? "edit",
      search: file.SEARCH_TOOL ?? "web_search",
      fetch: file.FETCH_TOOL ?? "web_fetch",
    },
    mode: file.mode ?? "code",
    sandbox: {
      enabled: file.sandbox?.enabled ?? "auto",
      writable: (file.sandbox?.writable ?? []).map((dir) => expandTilde(dir, env)),
      ...(file.sandbox?.network !== undefined ? { network: file.sandbox.network } : {}),
    },
    permissions: {
      allow: file.permissions?.allow ?? [],
      ask: file.permissions?.ask ?? [],
      deny: file.permissions?.deny ?? [],
    },
    skills: {
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
    },
    extensions,
    dotenv,
    childEnv: { allow: file.child_env?.allow ?? [] },
    checkpoints: {
      enabled: file.checkpoints?.enabled ?? true,
      maxFileMb: file.checkpoints?.max_file_mb ?? 10,
      keepDays: file.checkpoints?.keep_days ?? 30,
    },
    notes,
    notices,
  };
}
