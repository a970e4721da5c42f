/** `crow run` entry: parses the arguments and runs the terminal client. */
import { UsageError } from "../base/exit-codes.js";
import { parseRunArgs, RUN_HELP } from "./args.js";
import { runClient } from "./client.js";
import { EXIT } from "./terminal-client.js";

/** Runs `crow run <argv>`; resolves with the exit code. */
export async function runRun(argv: readonly string[]): Promise<number> {
  let parsed: ReturnType<typeof parseRunArgs>;
  try {
    parsed = parseRunArgs(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`crow run: ${error.message}\nRun 'crow run --help' for usage.\n`);
    return EXIT.usage;
  }
  if (parsed.help) {
    process.stdout.write(`${RUN_HELP}\n`);
    return EXIT.ok;
  }
  return runClient(parsed.options);
}
