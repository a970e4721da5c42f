/**
 * `crow logout`: removes the API keys `crow init` saved in `.env` (see config/saved-keys.ts) and says which. What
 * an editor's ACP `logout` does too.
 */
import { errorText } from "@crow/core";
import { homeDir } from "@crow/core/home";
import { parseArgs } from "@crow/mcp/parse-args";
import { ConfigError, describeLogout, displayPath, loadConfig, removeSavedKeys } from "../config/index.js";

export const LOGOUT_HELP = `Usage: crow logout

Removes the API keys crow init saved in .env in the config directory (CROW_HOME, CROW_CONFIG_DIR or ~/.crow): the
variables config.yaml's providers name as api_key: \${NAME_API_KEY} are emptied. config.yaml and every other setting
stay; run crow init to save a key again.`;

export interface LogoutIo {
  output?: NodeJS.WritableStream;
  errors?: NodeJS.WritableStream;
  env?: NodeJS.ProcessEnv;
}

/** Runs `crow logout` with its arguments (after `logout`). Resolves to the exit code. */
export async function runLogout(args: string[], io: LogoutIo = {}): Promise<number> {
  const output = io.output ?? process.stdout;
  const errors = io.errors ?? process.stderr;
  const env = io.env ?? process.env;
  let help: boolean | undefined;
  try {
    help = parseArgs({ args, options: { help: { type: "boolean", short: "h" } }, strict: true }).values.help;
  } catch (error) {
    errors.write(`crow logout: ${errorText(error)}\nRun 'crow logout --help' for usage.\n`);
    return 2;
  }
  if (help) {
    output.write(`${LOGOUT_HELP}\n`);
    return 0;
  }
  try {
    const result = await removeSavedKeys(loadConfig(env), env);
    output.write(`${describeLogout(result, (file) => displayPath(file, homeDir(env)))}\n`);
    return 0;
  } catch (error) {
    if (error instanceof ConfigError) {
      errors.write(`crow logout: ${error.message}\n`);
      return 2;
    }
    throw error;
  }
}
