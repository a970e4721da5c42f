/**
 * Signing out: the API keys `crow init` saved. init writes each provider's key to `.env` as `NAME_API_KEY` and
 * config.yaml refers to it as `api_key: ${NAME_API_KEY}`; removing the key empties that line in `.env` (the name
 * stays, so config.yaml still loads and every other setting keeps working; a model whose provider's key is empty
 * is then reported as signed out). Nothing else is touched: not config.yaml, not other variables, not a key written
 * literally in config.yaml or set in the real environment (those are said to be left).
 */
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { parseDotenv, updateDotenv } from "./dotenv.js";
import { configFiles } from "./home.js";
import type { AgentConfig, ProviderConfig } from "./types.js";

/**
 * Signed out: config.yaml names the variable of `provider`'s key and it is empty (a key removed by `crow logout`,
 * not one never needed). The sentence that says so, or undefined when the provider is not signed out.
 */
export function signedOutText(provider: ProviderConfig): string | undefined {
  if (!provider.keyVariable || provider.apiKey) return undefined;
  return (
    `Provider "${provider.name}" has no API key: ${provider.keyVariable} is empty, so Crow is signed out ` +
    "(crow logout removes the key); run crow init to save it again."
  );
}

/** What a logout did. */
export interface LoggedOut {
  /** The `.env` file it edited (or would have). */
  file: string;
  /** The variables whose saved key it removed. */
  removed: string[];
  /** Key variables it could not remove because the real environment sets them (that value is still used). */
  inEnvironment: string[];
}

/**
 * Empties, in `<home>/.env`, the key variables config.yaml's providers name (`api_key: ${VAR}`), for those that hold
 * a value there. `env` is the real environment (to tell which keys it still provides).
 */
export async function removeSavedKeys(
  config: Pick<AgentConfig, "home" | "providers">,
  env: NodeJS.ProcessEnv = process.env,
): Promise<LoggedOut> {
  const file = configFiles(config.home).dotenv;
  const text = existsSync(file) ? await readFile(file, "utf8") : "";
  const saved = parseDotenv(text, file);
  const variables = [
    ...new Set(Object.values(config.providers).flatMap((p) => (p.keyVariable ? [p.keyVariable] : []))),
  ];
  const removed = variables.filter((name) => (saved[name] ?? "") !== "");
  if (removed.length > 0) {
    await writeFile(file, updateDotenv(text, Object.fromEntries(removed.map((name) => [name, ""]))));
  }
  const inEnvironment = variables.filter((name) => (env[name] ?? "") !== "");
  return { file, removed, inEnvironment };
}

/** One line saying what a logout did, for people (crow logout) and logs. */
export function describeLogout(result: LoggedOut, shown: (file: string) => string): string {
  const parts = [
    result.removed.length > 0
      ? `Removed ${result.removed.join(", ")} from ${shown(result.file)}.`
      : `No saved API key to remove in ${shown(result.file)}.`,
  ];
  if (result.inEnvironment.length > 0) {
    parts.push(`${result.inEnvironment.join(", ")} still set in the environment (unset it there to sign out).`);
  }
  return parts.join(" ");
}
