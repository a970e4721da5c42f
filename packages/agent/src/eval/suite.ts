/**
 * A suite in Harbor's (Terminal-Bench 2.0) task format: a directory of task directories, each with `instruction.md`
 * (the prompt), `task.toml` (task-schema.ts says which fields apply), `environment/` (the
 * files the workspace starts with), `tests/test.sh` (the verifier) and optionally `solution/solve.sh` (the oracle).
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { type DockerPlan, planDockerfile } from "./dockerfile.js";
import { ignoredFields, resolveEnvTemplates } from "./task-schema.js";
import { parseToml, type TomlTable, type TomlValue } from "./toml.js";

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
  /** `[environment] allow_internet` (Harbor's default: true): the network of the agent's shell and every script. */
  allowInternet: boolean;
  /** The `env` tables of task.toml: `[environment.env]` (every phase), `[solution.env]`, `[verifier.env]`. */
  env: { environment: Record<string, string>; solution: Record<string, string>; verifier: Record<string, string> };
  /** `[environment] build_timeout_sec` (Harbor's default 600): the time the Dockerfile's steps get at setup. */
  buildTimeoutSec: number;
  /** task.toml's fields that have no effect here (reported when a run starts), e.g. `environment.cpus`. */
  ignored: string[];
}

/** A suite or task that cannot be used; the message says which file and what to do. */
export class SuiteError extends Error {
  override name = "SuiteError";
}

function table(value: TomlValue | undefined): TomlTable {
  return value !== undefined && typeof value === "object" && !Array.isArray(value) && !(value instanceof Date)
    ? value
    : {};
}

function seconds(value: TomlValue | undefined, fallback: number, where: string): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !(value > 0)) throw new SuiteError(`${where} must be a positive number of seconds`);
  return value;
}

/** An `env` table of task.toml, its `${NAME}` / `${NAME:-default}` values resolved as Harbor does. */
function stringTable(value: TomlValue | undefined, where: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, entry] of Object.entries(table(value))) {
    if (typeof entry === "object" && !(entry instanceof Date))
      throw new SuiteError(`${where}.${key} must be a string, number or boolean`);
    env[key] = String(entry);
  }
  return resolveEnvTemplates(
    env,
    process.env,
    (name, key) =>
      new SuiteError(
        `${where}.${key} is \${${name}}, but ${name} is not set in crow eval's environment: export it, or give a ` +
          `default as \${${name}:-value}`,
      ),
  );
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
  const instructionFile = path.join(dir, "instruction.md");
  if (!existsSync(instructionFile)) throw new SuiteError(`task ${name}: ${instructionFile} is missing`);
  const testFile = path.join(dir, "tests", "test.sh");
  if (!existsSync(testFile)) throw new SuiteError(`task ${name}: ${testFile} is missing (the verifier)`);
  const tomlFile = path.join(dir, "task.toml");
  const toml = existsSync(tomlFile) ? parseToml(readFileSync(tomlFile, "utf8"), tomlFile) : {};
  const environmentDir = path.join(dir, "environment");
  const solution = path.join(dir, "solution", "solve.sh");
  return {
    name,
    dir,
    instruction: readFileSync(instructionFile, "utf8"),
    agentTimeoutSec: seconds(
      table(toml.agent).timeout_sec,
      DEFAULT_AGENT_TIMEOUT_SEC,
      `${tomlFile} [agent] timeout_sec`,
    ),
    verifierTimeoutSec: seconds(
      table(toml.verifier).timeout_sec,
      DEFAULT_VERIFIER_TIMEOUT_SEC,
      `${tomlFile} [verifier] timeout_sec`,
    ),
    metadata: table(toml.metadata),
    environmentDir: existsSync(environmentDir) ? environmentDir : undefined,
    docker: planEnvironment(environmentDir, table(toml.environment)),
    solution: existsSync(solution) ? solution : undefined,
    suiteDir,
    allowInternet: table(toml.environment).allow_internet !== false,
    env: {
      environment: stringTable(table(toml.environment).env, `${tomlFile} [environment.env]`),
      solution: stringTable(table(toml.solution).env, `${tomlFile} [solution.env]`),
      verifier: stringTable(table(toml.verifier).env, `${tomlFile} [verifier.env]`),
    },
    buildTimeoutSec: seconds(
      table(toml.environment).build_timeout_sec,
      600,
      `${tomlFile} [environment] build_timeout_sec`,
    ),
    ignored: ignoredFields(toml),
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
