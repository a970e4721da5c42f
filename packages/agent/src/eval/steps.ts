/**
 * Harbor's multi-step tasks (task schema 1.1+): `[[steps]]` in task.toml, in order, each with its directory
 * `steps/<name>/` holding `instruction.md` (required), `tests/` (layered over the task's tests/ in the verifier's
 * /tests: the step's files win, its `test.sh` too when it has one) and `solution/solve.sh` (the oracle's).
 *
 * A trial runs the steps one after another in the one workspace: each step is a fresh agent session on the step's
 * instruction (Harbor shares the environment, not the context), then the step's verifier. A step's `workdir/` (and its
 * `setup.sh`) and collect hooks are hooks.ts's. A step whose reward falls
 * below its `min_reward` (a number, or per named reward) ends the trial there. The trial's reward is the mean of the
 * steps that ran (`multi_step_reward_strategy = "mean"`, Harbor's default; a named reward a step lacks counts 0) or
 * the last one's (`"final"`).
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import {
  type CollectHook,
  collectHooks,
  stepWorkdir,
  type VerifierEnvironmentSpec,
  verifierEnvironmentSpec,
} from "./hook-fields.js";
import { SuiteError, seconds, stringTable, table } from "./task-fields.js";
import type { TomlTable, TomlValue } from "./toml.js";

export interface EvalStep {
  name: string;
  instruction: string;
  agentTimeoutSec: number;
  verifierTimeoutSec: number;
  /** `[steps.verifier] env` over the task's `[verifier.env]`. */
  verifierEnv: Record<string, string>;
  /** `steps/<name>/tests`, when the step has one. */
  testsDir: string | undefined;
  /** `steps/<name>/solution`, when it has `solve.sh`. */
  solutionDir: string | undefined;
  /** Below it the trial stops after this step: one number, or a minimum per named reward. */
  minReward: number | Record<string, number> | undefined;
  /** `steps/<name>/workdir`, copied into the working directory before the step (its `setup.sh` run): hooks.ts. */
  workdir: string | undefined;
  /** `[[steps.verifier.collect]]`, run after the task's own (hooks.ts). */
  collect: CollectHook[];
  /** `[steps.verifier]` `environment_mode` / `environment` (verifier-env.ts): undefined inherits the task's. */
  verifierEnvironment: VerifierEnvironmentSpec | undefined;
}

export type RewardStrategy = "mean" | "final";

/** The task-level defaults a step falls back to. */
export interface StepDefaults {
  agentTimeoutSec: number;
  verifierTimeoutSec: number;
  verifierEnv: Record<string, string>;
}

const STEP_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

function minReward(value: TomlValue | undefined, where: string): EvalStep["minReward"] {
  if (value === undefined) return undefined;
  if (typeof value === "number") return value;
  const named = table(value);
  const entries = Object.entries(named);
  if (entries.length > 0 && entries.every(([, v]) => typeof v === "number")) {
    return Object.fromEntries(entries) as Record<string, number>;
  }
  throw new SuiteError(`${where} min_reward must be a number or a table of named numbers`);
}

/** The steps of the task in `dir` (none when task.toml has no `[[steps]]`). */
export function loadSteps(dir: string, toml: TomlTable, tomlFile: string, defaults: StepDefaults): EvalStep[] {
  const steps = toml.steps;
  if (steps === undefined) return [];
  if (!Array.isArray(steps) || steps.length === 0) {
    throw new SuiteError(`${tomlFile}: steps must be [[steps]] tables, at least one`);
  }
  const seen = new Set<string>();
  return steps.map((value, index) => {
    const step = table(value);
    const where = `${tomlFile} [[steps]] #${index + 1}`;
    const name = step.name;
    if (typeof name !== "string" || !STEP_NAME.test(name)) {
      throw new SuiteError(`${where}: name must be a folder name of steps/ (letters, digits, '.', '_', '-')`);
    }
    if (seen.has(name)) throw new SuiteError(`${where}: step ${name} is named twice`);
    seen.add(name);
    const stepDir = path.join(dir, "steps", name);
    const instruction = path.join(stepDir, "instruction.md");
    if (!existsSync(instruction)) throw new SuiteError(`${where}: ${instruction} is missing (the step's prompt)`);
    const testsDir = path.join(stepDir, "tests");
    const hasTests = existsSync(testsDir);
    if (!existsSync(path.join(testsDir, "test.sh")) && !existsSync(path.join(dir, "tests", "test.sh"))) {
      throw new SuiteError(`${where}: neither steps/${name}/tests/test.sh nor tests/test.sh exists (the verifier)`);
    }
    const solutionDir = path.join(stepDir, "solution");
    const agent = table(step.agent);
    const verifier = table(step.verifier);
    return {
      name,
      instruction: readFileSync(instruction, "utf8"),
      agentTimeoutSec: seconds(agent.timeout_sec, defaults.agentTimeoutSec, `${where} [steps.agent] timeout_sec`),
      verifierTimeoutSec: seconds(
        verifier.timeout_sec,
        defaults.verifierTimeoutSec,
        `${where} [steps.verifier] timeout_sec`,
      ),
      verifierEnv: { ...defaults.verifierEnv, ...stringTable(verifier.env, `${where} [steps.verifier.env]`) },
      testsDir: hasTests ? testsDir : undefined,
      solutionDir: existsSync(path.join(solutionDir, "solve.sh")) ? solutionDir : undefined,
      minReward: minReward(step.min_reward, where),
      workdir: stepWorkdir(stepDir),
      collect: collectHooks(verifier.collect, `${where} [[steps.verifier.collect]]`),
      verifierEnvironment: verifierEnvironmentSpec(verifier, `${where} [steps.verifier]`),
    };
  });
}

/** `multi_step_reward_strategy` (default "mean"). */
export function rewardStrategy(value: TomlValue | undefined, tomlFile: string): RewardStrategy {
  if (value === undefined || value === "mean" || value === "final") return value ?? "mean";
  throw new SuiteError(`${tomlFile}: multi_step_reward_strategy must be "mean" or "final"`);
}

/** Whether `reward` (and the named `rewards`) fall below `min` (the trial then stops after the step). */
export function belowMinimum(
  min: EvalStep["minReward"],
  reward: number,
  rewards: Readonly<Record<string, number>> | null,
): boolean {
  if (min === undefined) return false;
  if (typeof min === "number") return reward < min;
  return Object.entries(min).some(([key, floor]) => (rewards?.[key] ?? (key === "reward" ? reward : 0)) < floor);
}

/** The trial's reward from its steps' (those that ran), by `strategy`; named rewards averaged per key likewise. */
export function rollUp(
  strategy: RewardStrategy,
  results: readonly { reward: number; rewards: Readonly<Record<string, number>> | null }[],
): { reward: number; rewards: Record<string, number> | null } {
  const last = results.at(-1);
  if (!last) return { reward: 0, rewards: null };
  if (strategy === "final") return { reward: last.reward, rewards: last.rewards ? { ...last.rewards } : null };
  const reward = results.reduce((sum, r) => sum + r.reward, 0) / results.length;
  const keys = [...new Set(results.flatMap((r) => Object.keys(r.rewards ?? {})))];
  if (keys.length === 0) return { reward, rewards: null };
  const rewards = Object.fromEntries(
    keys.map((key) => [key, results.reduce((sum, r) => sum + (r.rewards?.[key] ?? 0), 0) / results.length]),
  );
  return { reward, rewards };
}
