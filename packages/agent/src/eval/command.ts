/**
 * `crow eval`: measure prompt versions and models on task suites. Subcommands: `run`, `report`, `compare`, `status`.
 * Every subcommand opens the configured store (`db_uri`); runs and trials live there with the sessions.
 */
import type { Store } from "@crow/core";
import { errorText } from "@crow/core";
import { type AgentConfig, ConfigError, loadConfig } from "../config/index.js";
import { useConfigEnvironment } from "../tools/child-env.js";
import { ImageError } from "./image-mounts.js";
import { rerunInOwnMountNamespace, wantsOwnMountNamespace } from "./image-namespace.js";
import { runEvalCompare, runEvalReport, runEvalStatus } from "./report-command.js";
import { RUN_HELP, runEvalRun } from "./run-command.js";
import { EvalUsageError } from "./stored-run.js";
import { SuiteError } from "./suite.js";
import { TomlError } from "./toml.js";
import { TrialSandboxError } from "./trial-sandbox.js";
import { ExposeError } from "./trial-view.js";
import { VariantError } from "./variants.js";
import { runEvalWorker, WORKER_HELP } from "./worker-command.js";

export const EVAL_HELP = `Usage: crow eval <command> [options]

Measures prompt versions and models on task suites (Harbor's task format: instruction.md, task.toml, environment/,
tests/test.sh, solution/solve.sh). Runs and trials are stored with the sessions (db_uri).

Commands:
  run SUITE            run every task × variant × trial; see 'crow eval run --help'
  run --resume RUN     finish what RUN has not recorded yet
  report RUN           pass rate (95 % CI), pass@k, pass^k, cost and tokens per solved task, median time
  report RUN --trial TASK[:VARIANT][#N]
                       one task's trials in full: error, rewards, time per phase, the verifier's and solver's output
  compare A B          B against A, paired by task: flips and a bootstrap interval of the pass-rate difference
                       (A and B are RUN or RUN:VARIANT); --fail-on-regression exits 1 when B is worse beyond it
  status RUN           how many trials are recorded, passed and left (from any host)
  worker               work off trials queued by 'run --queue' (PostgreSQL store); see 'crow eval worker --help'
  list                 recent runs

Options of report, compare, status, list: --json (JSON instead of Markdown).

Each trial runs in a bubblewrap sandbox with Harbor's container paths (no image: the host's tools, read-only):
/app (the workspace; the agent's tools see it too), /tests (verifier only), /solution (oracle only), /logs
(/logs/verifier writable by the verifier only); $EVAL_APP_DIR, $EVAL_TESTS_DIR, $EVAL_LOGS_DIR and
$EVAL_SOLUTION_DIR name them. A Dockerfile in environment/ is emulated (WORKDIR, COPY, ENV, RUN); as root, RUN
steps that install what the host lacks are built into a cached image layer over the host's system directories;
otherwise the task is skipped as needing its image.`;

const BAD_INPUT = [
  EvalUsageError,
  SuiteError,
  TomlError,
  VariantError,
  ConfigError,
  TrialSandboxError,
  ExposeError,
  ImageError,
];

/** `crow eval <args>`; resolves to the exit code. */
export async function runEval(args: readonly string[]): Promise<number> {
  const [command, ...rest] = args;
  if (command === undefined || command === "--help" || command === "-h" || command === "help") {
    (command === undefined ? process.stderr : process.stdout).write(`${EVAL_HELP}\n`);
    return command === undefined ? 2 : 0;
  }
  const handlers: Record<string, (args: readonly string[], config: AgentConfig, store: Store) => Promise<number>> = {
    run: runEvalRun,
    report: runEvalReport,
    compare: runEvalCompare,
    status: runEvalStatus,
    list: runEvalStatus,
    worker: runEvalWorker,
  };
  const handler = handlers[command];
  if (!handler) {
    process.stderr.write(`crow eval: unknown command "${command}". Run 'crow eval --help' for usage.\n`);
    return 2;
  }
  // Help needs no configuration or store (a broken one must not hide it).
  const help: Record<string, string> = { run: RUN_HELP, worker: WORKER_HELP };
  if ((rest.includes("--help") || rest.includes("-h")) && help[command]) {
    process.stdout.write(`${help[command]}\n`);
    return 0;
  }
  // As root, a command that runs trials does so in a mount namespace of its own, where images are mounted
  // (image-namespace.ts): the same command, run again there.
  if (wantsOwnMountNamespace(command, rest)) return rerunInOwnMountNamespace();
  let store: Store | undefined;
  try {
    const config = loadConfig();
    useConfigEnvironment(config);
    const { openStore } = await import("@crow/core");
    store = await openStore(config.dbUri, { baseDir: config.home });
    return await handler(command === "list" ? ["--list", ...rest] : rest, config, store);
  } catch (error) {
    const bad =
      BAD_INPUT.some((kind) => error instanceof kind) ||
      (error as { code?: string }).code?.startsWith("ERR_PARSE_ARGS");
    if (!bad) throw error;
    process.stderr.write(`crow eval: ${errorText(error)}\n`);
    return 2;
  } finally {
    await store?.close();
  }
}
