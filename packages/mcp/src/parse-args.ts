/**
 * `node:util`'s parseArgs with errors a person can read: Node's own message for an unknown option ends in an
 * unbalanced quote (`as in '-- "--nope"`); here it is "unknown option --nope (a value that starts with '-' goes
 * after '--', as in: -- --nope)". Other messages pass as Node words them. Every Crow command parses through this.
 */
import { parseArgs as nodeParseArgs, type ParseArgsConfig } from "node:util";
import { errorText } from "./error-text.js";

/** Node's wording of an unknown option (`Unknown option '--x'.`, then, where positionals are allowed, `To specify …`). */
const UNKNOWN = /^Unknown option '([^']*)'(\.|$)/;

/** The message of a parseArgs error, with Node's unknown-option sentence replaced (see above). */
export function argsErrorText(error: unknown): string {
  const message = errorText(error);
  const option = UNKNOWN.exec(message)?.[1];
  if (option === undefined) return message;
  if (!message.includes("positional argument")) return `unknown option ${option}`;
  return `unknown option ${option} (a value that starts with '-' goes after '--', as in: -- ${option})`;
}

/**
 * parseArgs, throwing Node's own error (its class and its `code`, `ERR_PARSE_ARGS_…`, which callers test) with
 * {@link argsErrorText}'s message.
 */
export function parseArgs<T extends ParseArgsConfig>(config: T): ReturnType<typeof nodeParseArgs<T>> {
  try {
    return nodeParseArgs(config);
  } catch (error) {
    if (error instanceof Error) error.message = argsErrorText(error);
    throw error;
  }
}
