// The crow command line: which command `crow <command>` is, once the process is set up (process-setup.ts), and the
// top-level help. This file only dispatches. A command's front (its help, options and exit code) lives in the room
// that does its work, as that room's command.ts (acp/, acp-net/ for `crow acp --listen`, run/, eval/,
// skill-installer/); a command with no room of its own is a file or folder in commands/ (init, logout, sessions,
// doctor). test/command-fronts.test.ts holds the dispatch to that rule.
import { existsSync } from "node:fs";
import { errorText } from "@crow/core";
import { parseArgs } from "@crow/mcp/parse-args";
import { EXIT_CODES_HELP } from "../base/exit-codes.js";
import { log } from "../base/log.js";
import { VERSION } from "../base/version.js";
import { configFiles, crowHome, preloadYaml } from "../config/index.js";
import { stopSharedToolserver } from "../tools/shared.js";

const HELP = `crow ${VERSION} — a coding agent: ACP to the editor, MCP to its tools, any OpenAI-compatible LLM.

Usage:
  crow acp            run the agent on stdio (what an editor launches, e.g. Zed's agent_servers)
  crow acp --listen [HOST:]PORT   serve it over the network (HTTP and WebSocket; see 'crow acp --help')
  crow run [prompt]   run a prompt (or a REPL with -i) in this terminal; see 'crow run --help'
  crow init           set up ~/.crow/config.yaml and .env (a wizard, or flags: see 'crow init --help')
  crow logout         remove the API keys crow init saved in .env (config.yaml and other settings stay)
  crow sessions       list, show, export, delete, fork or serve stored sessions (see 'crow sessions --help')
  crow eval           measure prompt versions and models on task suites (see 'crow eval --help')
  crow skills         add, update, list, find and trust Agent Skills (see 'crow skills --help')
  crow doctor         check the installation and the setup: ✓ fine, ✗ broken with what to do
  crow --help         show this help
  crow --version      print the version
  crow-mcp            the tool server (read, write, edit, terminal, web), also usable alone by any MCP client

Configuration: config.yaml and .env in CROW_HOME (or CROW_CONFIG_DIR, default ~/.crow). Without models there, the
environment below picks the provider.

Environment:
  CROW_HOME           where config.yaml, .env and the session store live (default ~/.crow)
  CROW_DB_URI         the session store: sqlite:///path.db or postgresql://… (default crow.db in CROW_HOME)
  SEARXNG_URL         the SearXNG instance web_search asks (default http://localhost:2946)
  OPENAI_BASE_URL     OpenAI-compatible endpoint (default https://api.openai.com/v1 when OPENAI_API_KEY is set)
  OPENAI_API_KEY      API key (local servers usually need none)
  CROW_MODEL          model id (default: the first of CROW_MODELS)
  CROW_MODELS         comma-separated models offered in the editor's model picker
  CROW_MAX_STEPS      LLM requests per prompt turn (default 100)
  CROW_CONTEXT_WINDOW context window in tokens (usage reporting; compaction at 80 % of it; default 128000)
  CROW_MAX_RETRIES    LLM retries after the first attempt (default 4)
  CROW_RETRY_BASE_MS  first retry backoff in ms (default 500)
  CROW_LOG            log level on stderr: error, warn (default), info, debug

${EXIT_CODES_HELP}`;

const CONFIGURED_COMMANDS = new Set(["acp", "run", "sessions", "init", "logout", "eval", "doctor"]);

/**
 * Resolves once what was written to `stream` so far has reached the operating system (or the stream failed: a
 * reader that went away). A pipe's writes are asynchronous: `process.exit` before then loses what is still queued
 * (`crow sessions list --json` piped into a slow reader stopped at 64 KB).
 */
function flushed(stream: NodeJS.WriteStream): Promise<void> {
  if (stream.destroyed || stream.writableLength === 0) return Promise.resolve();
  return new Promise((resolve) => {
    stream.once("error", () => resolve());
    stream.write("", () => resolve());
  });
}

/** Runs `crow <args>` and exits the process with its code once its output is out; a failure is logged and exits 1. */
export function runCrowAndExit(args: readonly string[]): void {
  const exit = async (code: number) => {
    // Nothing this command started outlives it: the shared crow-mcp (acp, run) ends before crow does.
    await stopSharedToolserver();
    await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
    process.exit(code);
  };
  runCrow(args).then(exit, (error: unknown) => {
    log.error("crow failed", error);
    return exit(1);
  });
}

/** Runs `crow <args>` (the arguments after the executable) and resolves to the process's exit code. */
export async function runCrow(args: readonly string[]): Promise<number> {
  const [first = ""] = args;
  // The commands that load the configuration: with a config.yaml, its parser loads first, the fast way (see yaml.ts).
  // `--version` and `--help` load nothing.
  if (CONFIGURED_COMMANDS.has(first) && existsSync(configFiles(crowHome()).config)) await preloadYaml();
  if (first === "sessions") return (await import("../commands/sessions.js")).runSessions(args.slice(1));
  if (first === "eval") return (await import("../eval/command.js")).runEval(args.slice(1));
  if (first === "skills") return (await import("../skill-installer/command.js")).runSkills(args.slice(1));
  if (first === "init") return (await import("../commands/init.js")).runInit(args.slice(1));
  // Terminal Auth: an editor appends the method's `init` to the configured `crow acp` (see acp/auth.ts).
  if (first === "acp" && args[1] === "init") return (await import("../commands/init.js")).runInit(args.slice(2));
  // Over the network instead of stdio: its own options (acp-net/command.ts).
  if (first === "acp" && args.slice(1).some((a) => a === "--listen" || a.startsWith("--listen=")))
    return (await import("../acp-net/command.js")).runAcpListen(args.slice(1));
  if (first === "logout") return (await import("../commands/logout.js")).runLogout(args.slice(1));
  if (first === "doctor") return (await import("../commands/doctor/index.js")).runDoctor(args.slice(1));
  // `crow run` has its own options: everything after "run" is its own (see run/args.ts).
  if (first === "run") return (await import("../run/command.js")).runRun(args.slice(1));
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: [...args],
      options: { help: { type: "boolean", short: "h" }, version: { type: "boolean", short: "v" } },
      strict: true,
      allowPositionals: true,
    });
  } catch (error) {
    process.stderr.write(`crow: ${errorText(error)}\nRun 'crow --help' for usage.\n`);
    return 2;
  }
  const [command, ...rest] = parsed.positionals;
  if (parsed.values.version) {
    process.stdout.write(`${VERSION}\n`);
    return 0;
  }
  // `crow acp` on stdio: its help and its options are its own (acp/command.ts).
  if (command === "acp") return (await import("../acp/command.js")).runAcpCommand(rest, parsed.values.help === true);
  if (parsed.values.help || command === undefined || command === "help") {
    (parsed.values.help ? process.stdout : process.stderr).write(`${HELP}\n`);
    return command === undefined && !parsed.values.help ? 2 : 0;
  }
  process.stderr.write(`crow: unknown command "${command}". Run 'crow --help' for usage.\n`);
  return 2;
}
