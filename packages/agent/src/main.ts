// The crow command line (loaded by cli.ts once the compile cache is on).
import { applyV8Flags } from "@crow/mcp/v8-flags";

// stdout carries ACP only: anything printed through console goes to stderr. The modules imported statically here
// print nothing; everything else loads after this.
console.log = console.error;
console.info = console.error;
console.debug = console.error;
// The agent's work is I/O and light JSON: trading optimization for memory costs it nothing measurable.
// WebAssembly stays on its baseline compiler: the one module the agent runs is fetch's HTTP parser (undici's llhttp;
// fetch serves resource links of prompts and the model list; LLM requests use node:http), whose optimizing compile
// was a ~27 MB peak (`crow run`: 106 → 79 MB when LLM requests still went through fetch) for code that parses a few kB.
applyV8Flags([
  ["optimize-for-size", ""],
  ["liftoff-only", ""],
]);

import { existsSync } from "node:fs";
import { parseArgs } from "node:util";
import { config as zodConfig } from "zod";
import { ConfigError, configFiles, crowHome, exportDotenv, loadConfig, preloadYaml } from "./config/index.js";
import { log } from "./log.js";
import { startSharedToolserver } from "./tools/shared.js";
import { VERSION } from "./version.js";

// Zod (the ACP and MCP SDKs' message validation, the config schema) without its JIT: by default every object schema
// compiles a parser with `new Function` on its first parse, and a process that parses each message kind a few times
// (a `crow run`, a fresh agent's first rounds) paid more for the compiles than they saved (~15 ms of CPU before the
// first LLM request). Set before the first parse; every package shares this one zod.
zodConfig({ jitless: true });

const HELP = `crow ${VERSION} — a coding agent: ACP to the editor, MCP to its tools, any OpenAI-compatible LLM.

Usage:
  crow acp            run the agent on stdio (what an editor launches, e.g. Zed's agent_servers)
  crow run [prompt]   run a prompt (or a REPL with -i) in this terminal; see 'crow run --help'
  crow init           set up ~/.crow/config.yaml and .env (a wizard, or flags: see 'crow init --help')
  crow sessions       list, show, export or delete stored sessions (see 'crow sessions --help')
  crow --help         show this help
  crow --version      print the version

Configuration: config.yaml and .env in CROW_HOME (or CROW_CONFIG_DIR, default ~/.crow). Without models there, the
environment below picks the provider.

Environment:
  OPENAI_BASE_URL     OpenAI-compatible endpoint (default https://api.openai.com/v1 when OPENAI_API_KEY is set)
  OPENAI_API_KEY      API key (local servers usually need none)
  CROW_MODEL          model id (default: the first of CROW_MODELS)
  CROW_MODELS         comma-separated models offered in the editor's model picker
  CROW_MAX_STEPS      LLM requests per prompt turn (default 100)
  CROW_CONTEXT_WINDOW context window in tokens for usage reporting (default 128000)
  CROW_MAX_RETRIES    LLM retries after the first attempt (default 4)
  CROW_RETRY_BASE_MS  first retry backoff in ms (default 500)
  CROW_LOG            log level on stderr: error, warn (default), info, debug`;

const CONFIGURED_COMMANDS = new Set(["acp", "run", "sessions", "init"]);

async function main(): Promise<number> {
  // The commands that load the configuration: with a config.yaml, its parser loads first, the fast way (see yaml.ts).
  // `--version` and `--help` load nothing.
  if (CONFIGURED_COMMANDS.has(process.argv[2] ?? "") && existsSync(configFiles(crowHome()).config)) await preloadYaml();
  if (process.argv[2] === "sessions") return (await import("./cli/sessions.js")).runSessions(process.argv.slice(3));
  if (process.argv[2] === "init") return (await import("./cli/init.js")).runInit(process.argv.slice(3));
  // `crow run` has its own options: everything after "run" is its own (see run/args.ts).
  if (process.argv[2] === "run") return (await import("./run/index.js")).runCommand(process.argv.slice(3));
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      options: { help: { type: "boolean", short: "h" }, version: { type: "boolean", short: "v" } },
      strict: true,
      allowPositionals: true,
    });
  } catch (error) {
    process.stderr.write(`crow: ${(error as Error).message}\nRun 'crow --help' for usage.\n`);
    return 2;
  }
  const [command, ...rest] = parsed.positionals;
  if (parsed.values.version) {
    process.stdout.write(`${VERSION}\n`);
    return 0;
  }
  if (parsed.values.help || command === undefined || command === "help") {
    (parsed.values.help ? process.stdout : process.stderr).write(`${HELP}\n`);
    return command === undefined && !parsed.values.help ? 2 : 0;
  }
  if (command === "acp") {
    if (rest.length > 0) {
      process.stderr.write(`crow acp takes no arguments (got: ${rest.join(" ")})\n`);
      return 2;
    }
    let config: ReturnType<typeof loadConfig>;
    try {
      config = loadConfig();
    } catch (error) {
      if (error instanceof ConfigError) {
        process.stderr.write(`crow: ${error.message}\n`);
        return 2;
      }
      throw error;
    }
    // Spawned tool servers see .env too (the built-in crow-mcp reads SEARXNG_URL), as upstream's load_dotenv did.
    exportDotenv(config);
    // The shared crow-mcp boots while the ACP layer and the runtime load, so the first session's tools are ready
    // sooner (every session, in any directory, is an MCP session of it; see tools/shared.ts).
    startSharedToolserver();
    for (const note of config.notes) log.info(note);
    for (const notice of config.notices) process.stderr.write(`crow: ${notice}\n`);
    // Started by hand in a terminal, it would otherwise sit silent: say what it expects (stderr; stdout is ACP).
    if (process.stdin.isTTY) {
      process.stderr.write(
        "crow acp: waiting for an ACP client on stdin (JSON-RPC, one message per line); an editor launches this. To use Crow in this terminal, run 'crow run'. Ctrl-C quits.\n",
      );
    }
    const { runAcp } = await import("./acp/run.js");
    await runAcp(config);
    return 0;
  }
  process.stderr.write(`crow: unknown command "${command}". Run 'crow --help' for usage.\n`);
  return 2;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    log.error("crow failed", error);
    process.exit(1);
  },
);
