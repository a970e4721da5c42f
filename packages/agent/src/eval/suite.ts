/**
 * A suite in Harbor's (Terminal-Bench 2.0) task format: a directory of task directories, each with `instruction.md`
 * (the prompt), `task.toml` (task-schema.ts says which fields apply), `environment/` (the
 * files the workspace starts with), `tests/test.sh` (the verifier) and optionally `solution/solve.sh` (the oracle);
 * or, for a multi-step task, `[[steps]]` with a `steps/<name>/` each (steps.ts).
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { type ArtifactSpec, artifactSpecs } from "./artifacts.js";
import { type DockerPlan, planDockerfile } from "./dockerfile.js";
import {
  type CollectHook,
  collectHooks,
  type VerifierEnvironmentSpec,
  verifierEnvironmentSpec,
} from "./hook-fields.js";
import { type EvalStep, loadSteps, type RewardStrategy, rewardStrategy } from "./steps.js";
import { SuiteError, seconds, stringTable, table } from "./task-fields.js";
import { ignoredFields, networkOf, removedFields } from "./task-schema.js";
import { parseToml, type TomlTable } from "./toml.js";

export { SuiteError } from "./task-fields.js";

/** Harbor's defaults when task.toml sets no timeout. */
const DEFAULT_AGENT_TIMEOUT_SEC = 600;
const DEFAULT_VERIFIER_TIMEOUT_SEC = 600;

export interface EvalTask {
  /** The directory's name. */
  name: string;
  dir: string;
  instruction: string;
  agentTimeoutSec: number;
  verifierTimeoutSec: number;
  metadata: TomlTable;
  /** `environment/`, when the task has one. */
  environmentDir: string | undefined;
  /** What setup does with `environment/Dockerfile` (dockerfile.ts), or why the task needs its image; none without one. */
  docker: DockerPlan | undefined;
  /** `solution/solve.sh`, when there is one. */
  solution: string | undefined;
  /** The suite's directory (hidden from the agent and every task script). */
  suiteDir: string;
  /**
   * The `[environment]` network baseline (`network_mode`, or the older `allow_internet`; Harbor's default public):
   * the network of the Dockerfile's RUN steps at setup.
   */
  allowInternet: boolean;
  /** The agent's shell and web tools, and the oracle's solve.sh: `[agent] network_mode`, else the baseline. */
  agentInternet: boolean;
  /** The verifier's network: `[verifier] network_mode`, else the `[environment]` baseline. */
  verifierInternet: boolean;
  /** `[[steps]]` (steps.ts): empty for a single-step task. */
  steps: EvalStep[];
  /** `multi_step_reward_strategy` (multi-step tasks). */
  rewardStrategy: RewardStrategy;
  /** `artifacts`: paths collected into the trial's record after the verifier (artifacts.ts). */
  artifacts: ArtifactSpec[];
  /** The `env` tables of task.toml: `[environment.env]` (every phase), `[solution.env]`, `[verifier.env]`. */
  env: { environment: Record<string, string>; solution: Record<string, string>; verifier: Record<string, string> };
  /** `[environment] build_timeout_sec` (Harbor's default 600): the time the Dockerfile's steps get at setup. */
  buildTimeoutSec: number;
  /** `[[verifier.collect]]`: commands run after the agent's part, before the verifier (hooks.ts). */
  collect: CollectHook[];
  /** `[verifier] environment_mode` / `[verifier.environment]` (verifier-env.ts); undefined: shared. */
  verifierEnvironment: VerifierEnvironmentSpec | undefined;
  /** task.toml's fields that have no effect here (reported when a run starts), e.g. `environment.cpus`. */
  ignored: string[];
  /** What to say about keys Harbor's schema removed (reported when a run starts, with what replaced them). */
  removed: string[];
}

/**
 * What setup does with the task's `environment/` (dockerfile.ts), or why the task needs its image: a GPU
 * (`[environment] gpus`) or services of a compose file, which the host's tools cannot stand in for. Undefined when
 * there is no Dockerfile (the workspace is a copy of environment/).
 */
function planEnvironment(environmentDir: string, environment: TomlTable): DockerPlan | undefined {
  const gpus = environment.gpus;
  if (typeof gpus === "number" && gpus > 0) {
    return { ok: false, reason: `needs the image: [environment] gpus = ${gpus} (trials get no GPU)` };
  }
  for (const compose of ["docker-compose.yaml", "docker-compose.yml", "compose.yaml", "compose.yml"]) {
    if (existsSync(path.join(environmentDir, compose))) {
      return { ok: false, reason: `needs the image: environment/${compose} (its services)` };
    }
  }
  const dockerfile = path.join(environmentDir, "Dockerfile");
  return existsSync(dockerfile) ? planDockerfile(readFileSync(dockerfile, "utf8")) : undefined;
}

/** Reads one task directory of the suite in `suiteDir`. */
export function loadTask(dir: string, suiteDir = dir): EvalTask {
  const name = path.basename(dir);
  const tomlFile = path.join(dir, "task.toml");
  const toml = existsSync(tomlFile) ? parseToml(readFileSync(tomlFile, "utf8"), tomlFile) : {};
  const instructionFile = path.join(dir, "instruction.md");
  const testFile = path.join(dir, "tests", "test.sh");
  const environment = table(toml.environment);
  const verifierEnv = stringTable(table(toml.verifier).env, `${tomlFile} [verifier.env]`);
  const agentTimeoutSec = seconds(
    table(toml.agent).timeout_sec,
    DEFAULT_AGENT_TIMEOUT_SEC,
    `${tomlFile} [agent] timeout_sec`,
  );
  const verifierTimeoutSec = seconds(
    table(toml.verifier).timeout_sec,
    DEFAULT_VERIFIER_TIMEOUT_SEC,
    `${tomlFile} [verifier] timeout_sec`,
  );
  // A multi-step task has its prompts and verifiers per step; the task's own are optional then.
  const steps = loadSteps(dir, toml, tomlFile, { agentTimeoutSec, verifierTimeoutSec, verifierEnv });
  if (steps.length === 0) {
    if (!existsSync(instructionFile)) throw new SuiteError(`task ${name}: ${instructionFile} is missing`);
    if (!existsSync(testFile)) throw new SuiteError(`task ${name}: ${testFile} is missing (the verifier)`);
  }
  const environmentDir = path.join(dir, "environment");
  const solution = path.join(dir, "solution", "solve.sh");
  const invalid = (text: string) => new SuiteError(`${tomlFile}: ${text}`);
  const baseline = networkOf(environment.network_mode, environment.allow_internet !== false, "[environment]", invalid);
  return {
    name,
    dir,
    instruction: existsSync(instructionFile) ? readFileSync(instructionFile, "utf8") : "",
    agentTimeoutSec,
    verifierTimeoutSec,
    metadata: table(toml.metadata),
    environmentDir: existsSync(environmentDir) ? environmentDir : undefined,
    docker: planEnvironment(environmentDir, environment),
    solution: existsSync(solution) ? solution : undefined,
    suiteDir,
    allowInternet: baseline,
    agentInternet: networkOf(table(toml.agent).network_mode, baseline, "[agent]", invalid),
    verifierInternet: networkOf(table(toml.verifier).network_mode, baseline, "[verifier]", invalid),
    steps,
    rewardStrategy: rewardStrategy(toml.multi_step_reward_strategy, tomlFile),
    artifacts: artifactSpecs(toml.artifacts, tomlFile),
    env: {
      environment: stringTable(environment.env, `${tomlFile} [environment.env]`),
      solution: stringTable(table(toml.solution).env, `${tomlFile} [solution.env]`),
      verifier: verifierEnv,
    },
    buildTimeoutSec: seconds(environment.build_timeout_sec, 600, `${tomlFile} [environment] build_timeout_sec`),
    collect: collectHooks(table(toml.verifier).collect, `${tomlFile} [[verifier.collect]]`),
    verifierEnvironment: verifierEnvironmentSpec(table(toml.verifier), `${tomlFile} [verifier]`),
    ignored: ignoredFields(toml),
    removed: removedFields(toml),
  };
}

/** `*` (any run of characters) and `?` (one character) against the whole name. */
export function globMatches(glob: string, name: string): boolean {
  const pattern = glob
    .replace(/[.+^${}()|[\]\\]/g, "\\$&")
    .replaceAll("*", ".*")
    .replaceAll("?", ".");
  return new RegExp(`^${pattern}$`).test(name);
}

/**
 * The tasks of the suite in `dir`, by name; `globs` (comma-separated in `--tasks`) keeps the matching ones. A
 * directory that is itself a task is a suite of one.
 */
export function loadSuite(dir: string, globs: readonly string[] = []): EvalTask[] {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new SuiteError(`suite ${dir} is not a directory`);
  // A directory with task.toml but no instruction.md is a broken task, refused by name, not silently left out.
  const isTask = (taskDir: string) =>
    existsSync(path.join(taskDir, "instruction.md")) || existsSync(path.join(taskDir, "task.toml"));
  if (isTask(dir)) return [loadTask(dir)];
  const names = readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && isTask(path.join(dir, entry.name)))
    .map((entry) => entry.name)
    .filter((name) => globs.length === 0 || globs.some((glob) => globMatches(glob, name)))
    .sort();
  if (names.length === 0) {
    const why = globs.length > 0 ? ` matching ${globs.join(",")}` : "";
    throw new SuiteError(`suite ${dir} has no tasks${why} (a task is a directory with instruction.md)`);
  }
  return names.map((name) => loadTask(path.join(dir, name), dir));
}
