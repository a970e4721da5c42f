import type { LoopSettings, PermissionMode, PermissionRules, RetryPolicy } from "@crow/core";
import type { LspSettings } from "@crow/mcp/lsp";
/**
 * One entry of a config file's `mcpServers` dict (upstream's shape, keyed by server name): `command`/`args`/`env`
 * for stdio, `url`/`headers` for HTTP. `transport` (or `type`) picks `stdio`, `http` (alias `streamable-http`) or
 * `sse`; without it, `url` means HTTP and `command` means stdio. A stdio server runs in the session cwd unless `cwd`
 * is given.
 */
export interface ConfigMcpServer {
  transport?: string;
  type?: string;
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
  url?: string;
  headers?: Record<string, string>;
}

/** An OpenAI-compatible endpoint. */
export interface ProviderConfig {
  name: string;
  /** e.g. `https://openrouter.ai/api/v1` (no trailing slash). */
  baseURL: string;
  /** Sent as a Bearer token; absent for local servers that need none. */
  apiKey?: string;
  headers?: Record<string, string>;
  /**
   * Where the settings came from, for messages that tell the user what to change: `urlFrom` e.g. `OPENAI_BASE_URL`
   * or `providers.local.base_url in ~/.crow/config.yaml`; `keyFrom` the variable the key came from (`OPENAI_API_KEY`,
   * `OPENROUTER_API_KEY (from ~/.crow/.env)`) or the config key that holds it. Never the key itself.
   */
  urlFrom?: string;
  keyFrom?: string;
  /**
   * The variable config.yaml's `api_key` is written as (`${OPENROUTER_API_KEY}`), when it is one: where `crow init`
   * saved the key (in `.env`), what `crow logout` empties, and how a key that is gone is told from one never needed.
   */
  keyVariable?: string;
}

/** Price per million tokens. */
export interface Price {
  input: number;
  output: number;
  /** Cached prompt tokens (default: `input`). */
  cachedInput?: number;
  currency: string;
}

/** `sandbox:` of config.yaml: how the terminal's commands are confined (docs/security.md "Sandbox"). */
export interface SandboxConfig {
  /** auto: confine when bubblewrap works here (else one notice); required: refuse sessions without it; off. */
  enabled: "auto" | "required" | "off";
  /** Absolute directories commands may write besides the session's working directory. */
  writable: string[];
  /** Network for commands; undefined: on in code and ask, off in read-only. */
  network?: boolean;
  /**
   * `CROW_BWRAP` (the environment's, else `.env`'s): the bubblewrap to run, a name looked up on PATH or a path
   * (default `bwrap`). Applied to this process by `useConfigEnvironment`; crow-mcp reads its own.
   */
  bwrap?: string;
}

/** A model offered in the model select. */
export interface ModelConfig {
  /** The select value and label (config.yaml's key; sessions store this name). */
  name: string;
  /** The id sent to the provider as `model`. */
  id: string;
  /** Key of `AgentConfig.providers`. */
  provider: string;
  /** Context window in tokens (usage_update `size`; compaction threshold). */
  contextWindow: number;
  /**
   * True when nobody gave the window (no `context_window`, no `CROW_CONTEXT_WINDOW`): `contextWindow` is then the
   * 128 000 default and compaction keeps its own 120 000 default instead of 80 % of a guess.
   */
  contextWindowAssumed?: true;
  price?: Price;
  /** The `reasoning_effort` values it accepts (config `reasoning_effort`); absent: it gets none. */
  reasoningEfforts?: string[];
  /**
   * The request's `max_tokens` (the model's `max_tokens`, else the file's `MAX_TOKENS`); absent: none is sent and the
   * provider's own limit applies.
   */
  maxTokens?: number;
}

export interface SkillsConfig {
  enabled: boolean;
  /** Extra skill directories (absolute), searched besides `~/.crow/skills` and the workspace's. */
  dirs: string[];
  /** The dense re-rank of `discover_skills` (`skills.embeddings`); keyword ranking only without it. */
  embeddings?: { baseURL: string; model: string; apiKey?: string; dimensions?: number };
}

export interface ExtensionEntry {
  /** A module path (absolute once loaded) or package name. */
  module: string;
  options: Record<string, unknown>;
}

/**
 * The agent's whole configuration: `config.yaml` (+ `.env`) merged over the environment fallbacks. Built by
 * `loadConfig`; every field has a value (defaults applied), so consumers never re-derive defaults. It is also the
 * loop's settings (core's `LoopSettings`: `maxStepsPerTurn` from `max_steps_per_turn` / `CROW_MAX_STEPS`), which the
 * runtime picks out of it and hands to every turn's loop unchanged.
 */
export interface AgentConfig extends LoopSettings {
  /** The config directory (`CROW_HOME`, `CROW_CONFIG_DIR` or `~/.crow`). */
  home: string;
  /** The `config.yaml` that was loaded, when there was one. */
  file?: string;
  providers: Record<string, ProviderConfig>;
  /** In the file's order; the model select shows them all. */
  models: ModelConfig[];
  /** Name of the model new sessions start with (undefined when no model is configured). */
  model?: string;
  /** Where {@link model}'s name came from, for people (config/sources.ts `modelFrom`); unset when nothing named it. */
  modelFrom?: string;
  /** The store URI as configured (`sqlite:///…`, `postgresql://…`, a path); the store parses it against `home`. */
  dbUri: string;
  /** Config `mcpServers` (disabled entries and upstream's `uvx crow-mcp` entry removed: the built-in serves it). */
  mcpServers: Record<string, ConfigMcpServer>;
  /**
   * `defer_tools`: false offers every MCP server's tools in every request, however many; absent or true, many of
   * them wait behind `find_tools` (core's extensions/deferred-tools.ts).
   */
  deferTools?: boolean;
  retry: RetryPolicy;
  /** Context window of models that do not set one (`CROW_CONTEXT_WINDOW`, default 128 000). */
  contextWindow: number;
  /**
   * `MAX_COMPACT_TOKENS` (else `CROW_MAX_COMPACT_TOKENS`) when set explicitly; see `compactionThresholdOf`
   * (compaction-threshold.ts) for the effective value.
   */
  maxCompactTokens?: number;
  /** Permission mode of new sessions (default `code`). */
  mode: PermissionMode;
  /** The permission layer's rules (`TOOL` or `TOOL(PATTERN)`, core's permission-rules.ts), each list present. */
  permissions: Required<PermissionRules>;
  skills: SkillsConfig;
  extensions: ExtensionEntry[];
  sandbox: SandboxConfig;
  /** config.yaml's `checkpoints`: snapshots of the workspace per turn, for `/rewind`. */
  checkpoints: { enabled: boolean; maxFileMb: number; keepDays: number };
  /** Variables defined by the `.env` file (real environment variables of the same name win). */
  dotenv: Record<string, string>;
  /** config.yaml's `child_env`: variables (names or `*` globs) passed to child processes although they look secret. */
  childEnv: { allow: string[] };
  /** config.yaml's `language_servers`, as the built-in crow-mcp takes them (undefined: its defaults). */
  languageServers?: LspSettings;
  /**
   * `CROW_LSP=off` (the environment's, else `.env`'s): crow-mcp, which reads it itself, checks no edits; `crow doctor`
   * says so.
   */
  lspOffByEnv?: true;
  /** `SEARXNG_URL` (the environment's, else `.env`'s): web_search's SearXNG, read by crow-mcp; `crow doctor` checks it. */
  searxngUrl?: string;
  /** Things worth a log line at startup (e.g. upstream's crow-mcp entry replaced by the built-in). */
  notes: string[];
  /**
   * Which source won where config.yaml and the environment both name the provider or model (see config/sources.ts):
   * printed on stderr at startup whatever the log level, so a setting is never silently ignored.
   */
  notices: string[];
  /**
   * Why no model could be inferred from `OPENAI_BASE_URL` alone (unreachable, several models, none), as the message
   * to show instead of a bare "No model configured": set by `adoptSingleModel`.
   */
  noModelBecause?: string;
}
