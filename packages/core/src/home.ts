/**
 * Where the user's and Crow's files live. Each function reads the environment it is given: the agent's
 * configuration loader (agent config/load.ts) passes the one it loads, so for the agent HOME and CROW_HOME are
 * settled there. `process.env` is only the default, for SDK hosts that load no configuration (`createCrow` without
 * `home`, `openStore()`) and for the agent's start before its configuration loads (entry/command.ts).
 */
import os from "node:os";
import path from "node:path";

/** The user's home directory: `HOME` from the given environment when set (tests), else the OS's. */
export function homeDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.HOME?.trim() || os.homedir();
}

/** `~/x` → `<home>/x`; anything else unchanged. */
export function expandTilde(value: string, env: NodeJS.ProcessEnv = process.env): string {
  if (value === "~") return homeDir(env);
  if (value.startsWith("~/")) return path.join(homeDir(env), value.slice(2));
  return value;
}

/**
 * Crow's home directory (config, .env, prompts, skills, the default SQLite store): `CROW_HOME`, else
 * `CROW_CONFIG_DIR` (the name upstream's banner advertised but never read), else `~/.crow`. Relative values are
 * resolved against the current directory. The one definition every package uses.
 */
export function crowHome(env: NodeJS.ProcessEnv = process.env): string {
  const configured = env.CROW_HOME?.trim() || env.CROW_CONFIG_DIR?.trim();
  if (configured) return path.resolve(expandTilde(configured, env));
  return path.join(homeDir(env), ".crow");
}
