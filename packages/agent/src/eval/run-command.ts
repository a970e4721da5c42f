/**
 * `crow eval run SUITE` and `crow eval run --resume RUN`: plans a run (tasks × variants × trials), records it, runs
 * what is missing in this process, and prints the report. Ctrl-C stops cleanly: trials in flight are cancelled and
 * left unrecorded, a second Ctrl-C exits at once; either way `--resume RUN` finishes only what is missing.
 */
import { randomBytes } from "node:crypto";
import path from "node:path";
import type { Crow, EvalRunRecord, EvalTrialRecord, Store } from "@crow/core";
import { parseArgs } from "@crow/mcp/parse-args";
import { type AgentConfig, adoptSingleModel, findModel, providerProblem } from "../config/index.js";
import { createCrow } from "../sdk/create-crow.js";
import { withImagesReady } from "./image-prepare.js";
import { createProgress } from "./progress.js";
import { renderReport } from "./render.js";
import { missingTrials, runMissingTrials } from "./runner.js";
import {
  EvalUsageError,
  QUEUE_NEEDS_POSTGRES,
  type StoredRunConfig,
  storedRunConfig,
  storedTasks,
  storedVariants,
} from "./stored-run.js";
import { type EvalTask, loadSuite } from "./suite.js";
import { summarize, variantsOf } from "./summary.js";
import { evalConfig } from "./trial-sandbox.js";
import { listOption, resolveVariants, type Variant, VariantError } from "./variants.js";
import { separateVerifiers } from "./verifier-env.js";

export const RUN_HELP = `Usage: crow eval run SUITE [options]
       crow eval run --resume RUN [--concurrency n] [--json]

Runs every task of SUITE (a directory of Harbor-format tasks) for each variant (models × prompt versions), k trials
each, and records every trial as an ordinary session in the store.

Options:
  --model a,b          models (config names; default: the configured model)
  --prompt v3,./p.njk  system prompt versions: stored (system_prompt@3, v3) or a template file (stored when used)
  --trials k           trials per task and variant (default 1)
  --concurrency n      trials at a time (default 1)
  --tasks GLOB[,GLOB]  only tasks whose directory name matches (* and ?)
  --name NAME          a label for the run
  --oracle             run solution/solve.sh instead of the agent (validates a suite: exit 1 below 100 %)
  --resume RUN         finish the trials of RUN that are not recorded yet
  --json               JSON events on stdout instead of the progress bar and report
  --queue              PostgreSQL store only: enqueue the trials for 'crow eval worker' processes (any hosts)
                       instead of running them here; 'crow eval status RUN' shows progress
  --job-expiry SEC     with --queue: a trial not finished this long after a worker took it is retried
                       (default: the task's agent + verifier timeouts + 120 s)
  --keep-workspaces    leave each trial's temp directory in place (paths in the log)`;

function positiveInt(value: string | undefined, fallback: number, option: string): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new EvalUsageError(`${option} takes a whole number ≥ 1 (got ${value})`);
  return n;
}

function newRunId(): string {
  const stamp = new Date().toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
  return `eval-${stamp}-${randomBytes(2).toString("hex")}`;
}

function checkModels(config: AgentConfig, variants: readonly Variant[]): void {
  for (const variant of variants) {
    if (variant.oracle) continue;
    if (variant.model && !findModel(config, variant.model)) {
      const known = config.models.map((m) => m.name).join(", ") || "none";
      throw new EvalUsageError(`--model ${variant.model}: not a configured model (configured: ${known})`);
    }
    const problem = providerProblem(config, variant.model ?? config.model);
    if (problem) throw new EvalUsageError(problem);
  }
}

/**
 * As `crow run` does: with `OPENAI_BASE_URL` alone (no model configured), the endpoint's only model — or the one
 * `--model` names — is the model, said on stderr; otherwise the configuration stays as it is and `checkModels` says
 * what is missing.
 */
export async function adoptEndpointModel(config: AgentConfig, requested?: string): Promise<void> {
  const notice = await adoptSingleModel(config, process.env, requested);
  if (notice) process.stderr.write(`crow eval: ${notice}\n`);
}

/** The options of `crow eval run` (see `RUN_HELP`). */
interface RunValues {
  model?: string;
  prompt?: string;
  trials?: string;
  concurrency?: string;
  tasks?: string;
  name?: string;
  oracle?: boolean;
  resume?: string;
  json?: boolean;
  queue?: boolean;
  "job-expiry"?: string;
  "keep-workspaces"?: boolean;
  help?: boolean;
}

/** A run to work on: its record, the tasks that can run here, and its variants. */
interface PlannedRun {
  run: EvalRunRecord;
  tasks: EvalTask[];
  variants: Variant[];
}

/** `crow eval run …`; resolves to the exit code. */
export async function runEvalRun(args: readonly string[], config: AgentConfig, store: Store): Promise<number> {
  const { values, positionals } = parseEvalRunArgs(args);
  if (values.help) {
    process.stdout.write(`${RUN_HELP}\n`);
    return 0;
  }
  const concurrency = positiveInt(values.concurrency, 1, "--concurrency");
  if (values.queue && store.kind !== "postgres") throw new EvalUsageError(QUEUE_NEEDS_POSTGRES);
  const plan = values.resume
    ? await resumedRun(values.resume, values, positionals, config, store)
    : await newRun(values, positionals, config, store);
  const { run, tasks, variants } = plan;
  const trials = storedRunConfig(run).trials;
  if (values.queue) return enqueueRun(store, config, run, tasks, variants, trials, values);
  const interrupted = await runHere(plan, trials, concurrency, values, config, store);
  if (!values.json) {
    const recorded = await store.evals.listTrials(run.id);
    const summaries = variantsOf(recorded, run).map((v) => summarize(v, recorded));
    process.stdout.write(renderReport(run, summaries, recorded));
  }
  if (interrupted) return 130;
  return values.oracle || variants.every((v) => v.oracle) ? oracleVerdict(await store.evals.listTrials(run.id)) : 0;
}

function parseEvalRunArgs(args: readonly string[]): { values: RunValues; positionals: string[] } {
  return parseArgs({
    args: [...args],
    options: {
      model: { type: "string" },
      prompt: { type: "string" },
      trials: { type: "string" },
      concurrency: { type: "string" },
      tasks: { type: "string" },
      name: { type: "string" },
      oracle: { type: "boolean" },
      resume: { type: "string" },
      json: { type: "boolean" },
      queue: { type: "boolean" },
      "job-expiry": { type: "string" },
      "keep-workspaces": { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
    allowPositionals: true,
    strict: true,
  });
}

/** `--resume RUN`: the stored run with its own suite, variants and trials; throws when other run options are given. */
async function resumedRun(
  runId: string,
  values: RunValues,
  positionals: readonly string[],
  config: AgentConfig,
  store: Store,
): Promise<PlannedRun> {
  if (positionals.length > 0 || values.model || values.prompt || values.trials || values.tasks || values.oracle) {
    throw new EvalUsageError(
      "--resume RUN takes the run's own suite, variants and trials: give only --concurrency, --json or --queue",
    );
  }
  const run = await store.evals.getRun(runId);
  if (!run) throw new EvalUsageError(`no eval run ${runId} in ${store.location}`);
  const tasks = await readyTasks(runnableTasks(storedTasks(run)), config, values.queue === true);
  const variants = await storedVariants(store, storedRunConfig(run));
  if (variants.some((v) => !v.oracle)) await adoptEndpointModel(config);
  checkModels(config, variants);
  return { run, tasks, variants };
}

/** `crow eval run SUITE`: plans the run (tasks × variants × trials) from the options and records it. */
async function newRun(
  values: RunValues,
  positionals: readonly string[],
  config: AgentConfig,
  store: Store,
): Promise<PlannedRun> {
  const [suite, ...extra] = positionals;
  if (!suite || extra.length > 0)
    throw new EvalUsageError("run takes one SUITE directory (see 'crow eval run --help')");
  const loaded = runnableTasks(loadSuite(path.resolve(suite), listOption(values.tasks)));
  if (values.oracle && (values.model || values.prompt))
    throw new EvalUsageError("--oracle runs no model: drop --model/--prompt");
  const models = listOption(values.model);
  if (!values.oracle) await adoptEndpointModel(config, models.length === 1 ? models[0] : undefined);
  const variants: Variant[] = values.oracle
    ? [{ label: "oracle", oracle: true }]
    : await resolveVariants(store, models, listOption(values.prompt), process.cwd(), config.model);
  const trials = positiveInt(values.trials, 1, "--trials");
  checkModels(config, variants);
  const tasks = await readyTasks(loaded, config, values.queue === true);
  // No sandbox here, or a bad CROW_EVAL_EXPOSE: said before a run is recorded (queued runs: each worker checks).
  if (!values.queue) evalConfig(config);
  const stored: StoredRunConfig = {
    tasks: tasks.map((t) => t.name),
    variants: variants.map((v) => ({
      label: v.label,
      ...(v.model ? { model: v.model } : {}),
      ...(v.prompt ? { promptId: v.prompt.id } : {}),
      ...(v.oracle ? { oracle: true } : {}),
    })),
    trials,
  };
  const run = await store.evals.createRun({
    id: newRunId(),
    name: values.name ?? null,
    suite: path.resolve(suite),
    config: stored,
  });
  return { run, tasks, variants };
}

/**
 * Runs the missing trials of `plan` in this process, showing progress (JSON events with `--json`); resolves to whether
 * Ctrl-C stopped it. The first Ctrl-C cancels the trials in flight (left unrecorded), a second exits at once.
 */
async function runHere(
  { run, tasks, variants }: PlannedRun,
  trials: number,
  concurrency: number,
  values: RunValues,
  agentConfig: AgentConfig,
  store: Store,
): Promise<boolean> {
  const config = evalConfig(agentConfig);
  const needsAgent = variants.some((v) => !v.oracle);
  const crow: Crow | undefined = needsAgent ? await createCrow({ config, store }) : undefined;
  const stop = stopOnCtrlC();
  const mode = values.json ? "json" : process.stderr.isTTY ? "tty" : "lines";
  const progress = createProgress(mode, run.id);
  let interrupted = false;
  try {
    ({ interrupted } = await runMissingTrials({
      context: { runId: run.id, config, ...(crow ? { crow } : {}), keepWorkspace: values["keep-workspaces"] === true },
      evals: store.evals,
      tasks,
      variants,
      trials,
      concurrency,
      signal: stop.signal,
      listener: progress,
    }));
  } finally {
    stop.dispose();
    progress.finish(interrupted);
    await crow?.close();
  }
  return interrupted;
}

/**
 * Listens for Ctrl-C until `dispose`: the first aborts `signal` (saying so on stderr), a second exits the process
 * at once with 130.
 */
function stopOnCtrlC(): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  let interrupts = 0;
  const onSigint = () => {
    interrupts++;
    if (interrupts > 1) process.exit(130);
    process.stderr.write("\ncrow eval: stopping (trials in flight are cancelled; Ctrl-C again to quit now)\n");
    controller.abort();
  };
  process.on("SIGINT", onSigint);
  return { signal: controller.signal, dispose: () => process.off("SIGINT", onSigint) };
}

/**
 * `--oracle` validates a suite: below 100 % it exits 1 and names the tasks whose reference solution did not pass
 * (`crow eval report RUN --trial TASK` tells why).
 */
function oracleVerdict(trials: readonly EvalTrialRecord[]): number {
  const failing = [...new Set(trials.filter((t) => !t.passed).map((t) => t.task))];
  if (failing.length === 0) return 0;
  process.stderr.write(
    `crow eval: the oracle did not pass ${failing.length} task(s): ${failing.join(", ")} (crow eval report ${trials[0]?.runId ?? "RUN"} --trial TASK says why)\n`,
  );
  return 1;
}

/**
 * The tasks that can run here, after saying on stderr what is not applied (task.toml fields, an emulated Dockerfile)
 * and which tasks are skipped because they need their image. Throws when none is left.
 */
function runnableTasks(tasks: readonly EvalTask[]): EvalTask[] {
  const runnable: EvalTask[] = [];
  for (const task of tasks) {
    const say = (text: string) => process.stderr.write(`crow eval: ${task.name}: ${text}\n`);
    if (task.ignored.length > 0) say(`task.toml fields not applied here: ${task.ignored.join(", ")}`);
    for (const removed of task.removed) say(`task.toml: ${removed}`);
    if (task.steps.length > 0) {
      say(`${task.steps.length} steps (${task.steps.map((s) => s.name).join(", ")}), reward: ${task.rewardStrategy}`);
    }
    if (task.docker && !task.docker.ok) {
      say(`skipped: ${task.docker.reason}`);
      continue;
    }
    const verifiers = separateVerifiers(task);
    const cannot = verifiers.find((v) => !v.ok);
    if (cannot && !cannot.ok) {
      say(`skipped: ${cannot.reason}`);
      continue;
    }
    for (const v of verifiers) if (v.ok) say(`verifier runs in a separate environment: ${v.what}`);
    const workdirs = task.steps.filter((s) => s.workdir).map((s) => s.name);
    if (workdirs.length > 0) say(`steps with a workdir/ (copied in, its setup.sh run first): ${workdirs.join(", ")}`);
    if (task.docker?.image) say(`environment from its Dockerfile, ${task.docker.emulated.at(-1)}`);
    else if (task.docker)
      say(`environment emulated from its Dockerfile (${task.docker.emulated.length} instruction(s))`);
    runnable.push(task);
  }
  if (runnable.length === 0) throw new EvalUsageError("no task of the suite can run here (each needs its image)");
  return runnable;
}

/**
 * The tasks whose image is built or cached (image-prepare.ts), before the run is recorded or resumed; with `--queue`
 * the workers build them. Throws when none is left.
 */
async function readyTasks(tasks: readonly EvalTask[], config: AgentConfig, queue: boolean): Promise<EvalTask[]> {
  if (queue || !tasks.some((task) => task.docker?.ok && task.docker.image)) return [...tasks];
  evalConfig(config);
  const ready = await withImagesReady(tasks, config.home, (task, text) =>
    process.stderr.write(`crow eval: ${task.name}: ${text}\n`),
  );
  if (ready.length === 0) throw new EvalUsageError("no task of the suite can run here (each needs its image)");
  return ready;
}

/** `--queue`: the missing trials go to the workers; resolves to the exit code. */
async function enqueueRun(
  store: Store,
  config: AgentConfig,
  run: EvalRunRecord,
  tasks: readonly EvalTask[],
  variants: readonly Variant[],
  trials: number,
  values: { json?: boolean; "job-expiry"?: string },
): Promise<number> {
  const { missing } = await missingTrials(store.evals, run.id, tasks, variants, trials);
  const expiry = values["job-expiry"] ? positiveInt(values["job-expiry"], 1, "--job-expiry") : undefined;
  const { enqueueTrials } = await import("./queue.js");
  const count = await enqueueTrials(config.dbUri, run, missing, expiry);
  if (values.json) process.stdout.write(`${JSON.stringify({ type: "enqueued", runId: run.id, trials: count })}\n`);
  else {
    process.stdout.write(
      `${run.id}: ${count} trial(s) enqueued. Work them off with 'crow eval worker' on any host using this db_uri; 'crow eval status ${run.id}' shows progress.\n`,
    );
  }
  return 0;
}

export { EvalUsageError, type StoredRunConfig, VariantError };
