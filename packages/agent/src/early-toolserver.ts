/**
 * The head start of the shared crow-mcp: `crow acp` and `crow run` spawn it before the command line and the agent
 * load, so it boots (on another core) while they do; a session's tools are then ready about when the session is.
 *
 * It runs before the configuration is loaded and validated, so it reads only what the toolserver's environment needs:
 * the variables of `<crow home>/.env` that the environment lacks (what `exportDotenv` adds later for the agent). A
 * `.env` that cannot be read or parsed is skipped here: the configuration loader reports it and the command stops,
 * which also stops the toolserver (its stdin closes).
 */
import { readFileSync } from "node:fs";
import { parseDotenv } from "./config/dotenv.js";
import { configFiles, crowHome } from "./config/home.js";
import { startSharedToolserver } from "./tools/shared.js";

/** Whether `crow <argv>` is a command that will use the shared toolserver (cheap checks only, before parsing). */
export function usesToolserver(argv: readonly string[]): boolean {
  const [command, ...rest] = argv;
  if (command === "acp") return rest.length === 0;
  return command === "run" && !rest.some((arg) => arg === "-h" || arg === "--help");
}

/** `env` plus the `.env` variables it lacks: the environment the toolserver would get once the config is loaded. */
export function environmentWithDotenv(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) if (value !== undefined) out[key] = value;
  let dotenv: Record<string, string> = {};
  try {
    dotenv = parseDotenv(readFileSync(configFiles(crowHome(env)).dotenv, "utf8"));
  } catch {
    // No .env (the usual case), or one the configuration loader will report.
  }
  for (const [key, value] of Object.entries(dotenv)) out[key] ??= value;
  return out;
}

/** Spawns the shared crow-mcp now if `argv` is a command that will use it. Never throws. */
export function startToolserverEarly(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): void {
  if (usesToolserver(argv)) startSharedToolserver(environmentWithDotenv(env));
}
