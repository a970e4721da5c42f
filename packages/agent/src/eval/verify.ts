/**
 * The verifier: tests/test.sh, after the agent (or the oracle), in the trial's sandbox (verifier phase: a writable
 * copy of tests/ at /tests, made afresh for each run, and a writable /logs/verifier), with its own timeout. Its reward is what it wrote to /logs/verifier/reward.txt (a number)
 * or reward.json (a number, or an object of named numbers: all kept); a verifier that crashed or timed out without
 * writing one scores 0 with the reason recorded.
 *
 * The reward files are read from the host only as regular files, without following links, and small: the sandbox
 * has exited (with everything it started) before they are read, so nothing can change them meanwhile.
 */
import { closeSync, constants, existsSync, fstatSync, mkdirSync, openSync, readSync, rmSync } from "node:fs";
import path from "node:path";
import { workdirOf } from "./setup.js";
import type { EvalTask } from "./suite.js";
import { CONTAINER, runInTrial, STAGE } from "./trial-sandbox.js";
import type { TrialWorkspace } from "./workspace.js";

export interface Verdict {
  reward: number;
  /** reward.json's named rewards, when it had several (or one not called `reward`). */
  rewards: Record<string, number> | null;
  /** Why there is no reward from the verifier, when there is none. */
  error: string | null;
  /** The end of test.sh's stdout and stderr (Harbor's test-stdout.txt). */
  output: string;
  ms: number;
}

/** A trial passes when its reward reaches 1 (Harbor's binary tasks write 1 or 0). */
export const PASS_REWARD = 1;

const MAX_REWARD_FILE = 64 * 1024;

/** The text of a regular file, read without following a link; undefined when absent or not a small regular file. */
function readRegular(file: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile() || stats.size > MAX_REWARD_FILE) return undefined;
    const buffer = Buffer.alloc(stats.size);
    const read = readSync(fd, buffer, 0, stats.size, 0);
    return buffer.subarray(0, read).toString("utf8");
  } finally {
    closeSync(fd);
  }
}

export interface Reward {
  reward: number;
  rewards: Record<string, number> | null;
}

/**
 * The reward of reward.json's content: a number; `{"reward": n, …}` (n decides); or named rewards without `reward`
 * (the trial's reward is their minimum, so it passes when every one reaches 1). Undefined when none is a number.
 */
export function parseRewardJson(text: string): Reward | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof parsed === "number") return Number.isFinite(parsed) ? { reward: parsed, rewards: null } : undefined;
  if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) return undefined;
  const rewards: Record<string, number> = {};
  for (const [name, value] of Object.entries(parsed)) {
    if (typeof value === "number" && Number.isFinite(value)) rewards[name] = value;
  }
  const names = Object.keys(rewards);
  if (names.length === 0) return undefined;
  const named = names.length === 1 && names[0] === "reward" ? null : rewards;
  const reward = rewards.reward ?? Math.min(...Object.values(rewards));
  return { reward, rewards: named };
}

export function readReward(logs: string): Reward | undefined {
  const text = readRegular(path.join(logs, "verifier", "reward.txt"));
  if (text !== undefined) {
    const value = Number(text.trim());
    return text.trim() !== "" && Number.isFinite(value) ? { reward: value, rewards: null } : undefined;
  }
  const json = readRegular(path.join(logs, "verifier", "reward.json"));
  return json === undefined ? undefined : parseRewardJson(json);
}

function tail(output: string): string {
  const trimmed = output.trim();
  return trimmed ? `: ${trimmed.slice(-500)}` : "";
}

/** What one verifier run of a multi-step task's step uses instead of the task's own. */
export interface VerifierPart {
  timeoutSec: number;
  env: Readonly<Record<string, string>>;
  /** The step's tests/, copied over the task's in /tests (its files win). */
  stepTests: string | undefined;
}

/** Runs the verifier of `task` (or of one of its steps, `part`) in `workspace`. */
export async function verify(
  task: EvalTask,
  workspace: TrialWorkspace,
  signal?: AbortSignal,
  part?: VerifierPart,
): Promise<Verdict> {
  // Each run gets its own writable /tests, copied in its sandbox from the task's (read-only there), as Harbor copies;
  // and no reward file of an earlier run (a step's) is left to be read as this one's.
  rmSync(workspace.testsCopy, { recursive: true, force: true });
  mkdirSync(workspace.testsCopy);
  const verifierLogs = path.join(workspace.logs, "verifier");
  rmSync(verifierLogs, { recursive: true, force: true });
  mkdirSync(verifierLogs);
  const staged: Record<string, string> = {};
  if (existsSync(workspace.tests)) staged.tests = workspace.tests;
  if (part?.stepTests) staged.step = part.stepTests;
  const sandbox = { phase: "verifier" as const, network: task.verifierInternet, cwd: workdirOf(task), staged };
  const copyThenTest = `for d in "$@"; do cp -R --preserve=mode,timestamps -- "$d"/. ${CONTAINER.tests}/ || exit; done; exec bash ${CONTAINER.tests}/test.sh`;
  const timeoutSec = part?.timeoutSec ?? task.verifierTimeoutSec;
  const sources = Object.keys(staged).map((name) => `${STAGE}/${name}`);
  const outcome = await runInTrial(workspace, sandbox, ["bash", "-c", copyThenTest, "verify", ...sources], {
    env: workspace.scriptEnv({ ...task.env.environment, ...(part?.env ?? task.env.verifier) }),
    timeoutMs: timeoutSec * 1000,
    ...(signal ? { signal } : {}),
  });
  const ran = { output: outcome.output, ms: outcome.ms };
  if (outcome.timedOut) {
    const error = `verifier timed out after ${timeoutSec}s${tail(outcome.output)}`;
    return { reward: 0, rewards: null, error, ...ran };
  }
  const reward = readReward(workspace.logs);
  if (reward !== undefined) return { ...reward, error: null, ...ran };
  const error = `verifier wrote no reward (tests/test.sh exited with ${outcome.code ?? "a signal"})${tail(outcome.output)}`;
  return { reward: 0, rewards: null, error, ...ran };
}
