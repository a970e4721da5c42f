/**
 * The environments of the processes the agent starts: stdio MCP servers (from config.yaml and from the editor), the
 * shared crow-mcp, and through it the terminal's shell. The policy itself (which names and values are secrets) is
 * `@crow/mcp/child-env`, shared with crow-mcp; this file adds what only the agent knows once its configuration is
 * loaded: the configured keys, config.yaml's `child_env.allow`, and which variables only Crow's `.env` set.
 *
 * `.env` is Crow's own file: its variables reach no child process, except those `child_env.allow` names and what
 * crow-mcp itself reads (`SEARXNG_URL`, `CROW_*` settings), which crow-mcp gets and hides from its shell. The agent
 * process keeps `.env`'s `CROW_*` settings (`CROW_LOG`, `CROW_MAX_COMPACT_TOKENS`…) in its own environment; every
 * other `.env` value stays in the configuration (`config.dotenv`, which extensions are given).
 */
import {
  CHILD_ENV_ALLOW,
  CHILD_ENV_DROP,
  childEnvironment,
  isSecretName,
  nameList,
  nameMatches,
} from "@crow/mcp/child-env";
import { useBwrapProgram } from "@crow/mcp/sandbox";
import type { AgentConfig } from "../config/index.js";
import { configuredSecrets } from "../config/secrets.js";

/** What the agent knows about secrets once the configuration is loaded. */
export interface ChildEnvSettings {
  /** config.yaml's `child_env.allow`: names or `*` globs passed whatever they look like. */
  readonly allow: readonly string[];
  /** `.env`'s variables. */
  readonly dotenv: Readonly<Record<string, string>>;
  /** The names of {@link dotenv} the real environment does not set: Crow's own, never passed as such. */
  readonly dotenvOnly: readonly string[];
  /** Configured keys: no variable holding one is passed. */
  readonly secrets: readonly string[];
}

type Env = Readonly<Record<string, string | undefined>>;

/** Until a configuration is applied (a library user's router): the name and value rules alone. */
let current: ChildEnvSettings = { allow: [], dotenv: {}, dotenvOnly: [], secrets: [] };
/** `.env` variables this module copied into the process environment (so they still count as `.env`-only). */
const copied = new Set<string>();

/** Whether a `.env` variable is a Crow setting the agent and crow-mcp read themselves (never a secret). */
function isCrowSetting(name: string): boolean {
  return (name.startsWith("CROW_") || name === "SEARXNG_URL") && !isSecretName(name);
}

/** The settings for `dotenv` and a configuration's allow-list and keys, over environment `env`. */
export function childEnvSettings(
  dotenv: Readonly<Record<string, string>>,
  options: { allow?: readonly string[]; secrets?: readonly string[] } = {},
  env: Env = process.env,
): ChildEnvSettings {
  return {
    allow: options.allow ?? [],
    dotenv,
    dotenvOnly: Object.keys(dotenv).filter((name) => env[name] === undefined || copied.has(name)),
    secrets: options.secrets ?? [],
  };
}

/**
 * Applies a loaded configuration: the settings every later child environment is built with, `.env`'s Crow
 * settings copied into `env` (the agent's own environment) where it lacks them, and the bubblewrap the sandbox's
 * check runs in this process (`CROW_BWRAP`; crow-mcp reads its own).
 */
export function useConfigEnvironment(config: AgentConfig, env: NodeJS.ProcessEnv = process.env): void {
  useBwrapProgram(config.sandbox.bwrap);
  current = childEnvSettings(config.dotenv, { allow: config.childEnv.allow, secrets: configuredSecrets(config) }, env);
  // CROW_LOG, CROW_MAX_COMPACT_TOKENS… (SEARXNG_URL is crow-mcp's alone).
  for (const name of current.dotenvOnly.filter((each) => each.startsWith("CROW_") && isCrowSetting(each))) {
    env[name] = config.dotenv[name];
    copied.add(name);
  }
}

/** The names let through: config.yaml's allow-list and the environment's own `CROW_CHILD_ENV_ALLOW`. */
function allowed(settings: ChildEnvSettings, env: Env): string[] {
  return [...new Set([...settings.allow, ...nameList(env[CHILD_ENV_ALLOW])])];
}

/**
 * The environment a child process starts from (a stdio MCP server adds its own `env:` on top): `env` without
 * secrets and without `.env`'s variables, plus the allowed variables that only `.env` sets.
 */
export function childProcessEnvironment(
  env: Env = process.env,
  settings: ChildEnvSettings = current,
): Record<string, string> {
  const allow = allowed(settings, env);
  const out = childEnvironment(env, { allow, drop: settings.dotenvOnly, secretValues: settings.secrets });
  for (const name of settings.dotenvOnly) {
    const value = settings.dotenv[name];
    if (value !== undefined && nameMatches(name, allow)) out[name] = value;
  }
  return out;
}

/**
 * The environment of the built-in crow-mcp: a child's ({@link childProcessEnvironment}), plus what crow-mcp reads
 * from Crow's `.env` (`SEARXNG_URL`, `CROW_*` settings), the names its shell must not get (those) and the names it
 * must let through (the allow-list), in `CROW_CHILD_ENV_DROP` and `CROW_CHILD_ENV_ALLOW`.
 */
export function toolserverEnvironment(
  env: Env = process.env,
  settings: ChildEnvSettings = current,
): Record<string, string> {
  const out = childProcessEnvironment(env, settings);
  const forToolserverOnly = settings.dotenvOnly.filter((name) => isCrowSetting(name) && out[name] === undefined);
  for (const name of forToolserverOnly) out[name] = settings.dotenv[name] as string;
  const allow = allowed(settings, env);
  if (allow.length > 0) out[CHILD_ENV_ALLOW] = allow.join(",");
  if (forToolserverOnly.length > 0) out[CHILD_ENV_DROP] = forToolserverOnly.join(",");
  return out;
}
