/** Command line of `crow run`. */
import { statSync } from "node:fs";
import path from "node:path";
import { errorText } from "@crow/core";
import { parseArgs } from "@crow/mcp/parse-args";
import { remoteUrl } from "../acp-net/connect.js";
import { configuredToken } from "../acp-net/token.js";
import { EXIT_CODES_HELP, UsageError } from "../base/exit-codes.js";

export const RUN_HELP = `Usage: crow run [prompt…] [options]

Runs a prompt (or a REPL with -i) through the Crow agent in this terminal. The prompt can also be piped on stdin;
input piped beside a prompt argument (git diff | crow run "review this") is sent after it, up to 256 KB.
Mention files as @path or @path#L10:20 to attach them.

Options:
  -i, --interactive     REPL: type prompts one after another (after the prompt, if one is given)
  -s, --session ID      continue a saved session (its id, or any unique beginning of it)
      --rewind          with -s: pick one of the session's messages and go back to before it (files, conversation
                        or both), then go on with the prompt or the REPL, if any
  -c, --cwd DIR         working directory of the session (default: the current directory)
      --add-dir DIR     another directory the session works in (repeatable; give them again with -s)
      --model M         model for this session (one of the configured models)
      --mode M          permission mode: code (tools run freely), ask (confirm changes), read-only
      --thought LEVEL   thought level (reasoning_effort) for a model configured with levels, e.g. low or high
      --connect URL     talk to a Crow served by 'crow acp --listen' (ws://host:port/acp or http://…): its tools
                        run there, --cwd names a directory there; the token from --token-file or CROW_ACP_TOKEN
      --token-file FILE the --connect token (its first line)
      --json            one JSON event per line on stdout (session, prompt, update, plan, permission, notice,
                        stop, error)
  -y, --yes             allow every permission request without asking (questions to you are declined)
  -h, --help            show this help

In the REPL: /exit or Ctrl-D quits (or Ctrl-C twice at an empty prompt); the agent's commands (/help, /compact,
/clear, …) work as in an editor. Ctrl-C cancels the running turn; a second Ctrl-C quits.

${EXIT_CODES_HELP}`;

export interface RunOptions {
  /** The prompt given as arguments (joined by spaces). */
  prompt?: string;
  interactive: boolean;
  session?: string;
  /** Absolute, existing directory. */
  cwd: string;
  /** `--add-dir`: the session's other workspace roots (absolute, existing directories; ACP additionalDirectories). */
  addDirs: string[];
  model?: string;
  mode?: string;
  /** `--thought`: the session's thought level (the `thought_level` select). */
  thought?: string;
  json: boolean;
  yes: boolean;
  /** `--rewind`: the picker before anything else (needs `session`). */
  rewind: boolean;
  /** `--connect`: the remote agent and its token (then `cwd` and `addDirs` are paths there, unchecked here). */
  connect?: { url: URL; token: string; tokenFile?: string };
}

export type ParsedRun = { help: true } | { help: false; options: RunOptions };

/** Parses the arguments after `run`. Throws `UsageError`. */
export function parseRunArgs(
  argv: readonly string[],
  base: string = process.cwd(),
  env: NodeJS.ProcessEnv = process.env,
): ParsedRun {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    throw new UsageError(errorText(error));
  }
  const { values, positionals } = parsed;
  if (values.help) return { help: true };
  const connect = remoteAgent(values.connect, values["token-file"], env);
  const dir = connect ? (d: string) => path.resolve(base, d) : (d: string, flag: string) => existingDir(base, d, flag);
  const cwd = dir(values.cwd ?? ".", "--cwd");
  const addDirs = (values["add-dir"] ?? []).map((d) => dir(d, "--add-dir"));
  for (const name of ["session", "model", "mode", "thought"] as const) {
    if (values[name] !== undefined && values[name].trim() === "") throw new UsageError(`--${name} needs a value`);
  }
  if (values.rewind && !values.session) throw new UsageError("--rewind needs a session: crow run -s ID --rewind");
  const prompt = positionals.join(" ");
  return {
    help: false,
    options: {
      ...(prompt.trim() ? { prompt } : {}),
      interactive: values.interactive ?? false,
      ...(values.session ? { session: values.session } : {}),
      cwd,
      addDirs,
      ...(values.model ? { model: values.model } : {}),
      ...(values.mode ? { mode: values.mode } : {}),
      ...(values.thought ? { thought: values.thought } : {}),
      json: values.json ?? false,
      yes: values.yes ?? false,
      rewind: values.rewind ?? false,
      ...(connect ? { connect } : {}),
    },
  };
}

/** `--connect` and its token; throws UsageError for a bad URL or a missing token. */
function remoteAgent(
  url: string | undefined,
  tokenFile: string | undefined,
  env: NodeJS.ProcessEnv,
): RunOptions["connect"] | undefined {
  if (url === undefined) {
    if (tokenFile !== undefined) throw new UsageError("--token-file only applies with --connect");
    return undefined;
  }
  try {
    const token = configuredToken(tokenFile, env);
    if (token === undefined) {
      throw new UsageError(
        "--connect needs the token the server printed: put it in a file for --token-file FILE, or set CROW_ACP_TOKEN",
      );
    }
    return { url: remoteUrl(url), token, ...(tokenFile !== undefined ? { tokenFile: path.resolve(tokenFile) } : {}) };
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(errorText(error));
  }
}

/** `dir` (relative to `base`) as an absolute path; throws UsageError when it is not an existing directory. */
function existingDir(base: string, dir: string, flag: string): string {
  const abs = path.resolve(base, dir);
  let isDir = false;
  try {
    isDir = statSync(abs).isDirectory();
  } catch {
    throw new UsageError(`${flag} ${dir}: no such directory`);
  }
  if (!isDir) throw new UsageError(`${flag} ${dir}: not a directory`);
  return abs;
}

function parse(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    options: {
      interactive: { type: "boolean", short: "i" },
      session: { type: "string", short: "s" },
      cwd: { type: "string", short: "c" },
      "add-dir": { type: "string", multiple: true },
      model: { type: "string" },
      mode: { type: "string" },
      thought: { type: "string" },
      json: { type: "boolean" },
      yes: { type: "boolean", short: "y" },
      rewind: { type: "boolean" },
      connect: { type: "string" },
      "token-file": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
    strict: true,
    allowPositionals: true,
  });
}
