/**
 * The head start of the shared crow-mcp: `crow acp` and `crow run` spawn it before the command line and the agent
 * load, so it boots (on another core) while they do; a session's tools are then ready about when the session is.
 *
 * It runs before the configuration is loaded and validated, so it reads only what the toolserver's environment needs:
 * `<crow home>/.env` (crow-mcp reads `SEARXNG_URL` and `CROW_*` settings from it, see tools/child-env.ts). A
 * `.env` that cannot be read or parsed is skipped here: the configuration loader reports it and the command stops,
 * which also stops the toolserver (its stdin closes).
 */
import { readFileSync } from "node:fs";
import { parseDotenv } from "../config/dotenv.js";
import { configFiles, crowHome } from "../config/home.js";
import { childEnvSettings, toolserverEnvironment } from "../tools/child-env.js";
import { startSharedToolserver } from "../tools/shared.js";

/** Whether `crow <argv>` is a command that will use the shared toolserver (cheap checks only, before parsing). */
export function usesToolserver(argv: readonly string[]): boolean {
  const [command, ...rest] = argv;
  if (command === "acp") return rest.length === 0;
  return command === "run" && !rest.some((arg) => arg === "-h" || arg === "--help");
}

/**
 * The environment the toolserver would get once the configuration is loaded, as far as it can be known before:
 * `env` and `.env` under the child environment policy (tools/child-env.ts), without config.yaml's allow-list and
 * keys. When those change it, the toolserver is started again before any session uses it.
 */
export function earlyToolserverEnvironment(env: NodeJS.ProcessEnv): Record<string, string> {
  let dotenv: Record<string, string> = {};
  try {
    dotenv = parseDotenv(readFileSync(configFiles(crowHome(env)).dotenv, "utf8"));
  } catch {
    // No .env (the usual case), or one the configuration loader will report.
  }
  return toolserverEnvironment(env, childEnvSettings(dotenv, {}, env));
}

/** Spawns the shared crow-mcp now if `argv` is a command that will use it. Never throws. */
export function startToolserverEarly(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): void {
  if (usesToolserver(argv)) startSharedToolserver(earlyToolserverEnvironment(env));
}
