/**
 * A trial's private directory, fresh for each trial:
 *
 *   <tmp>/crow-eval-XXXX/app/              the workspace: a copy of the task's environment/ (the agent's cwd)
 *   <tmp>/crow-eval-XXXX/logs/verifier/    where test.sh writes reward.txt or reward.json
 *   <tmp>/crow-eval-XXXX/tests/            the task's tests/, copied only after the agent's turn ended
 *   <tmp>/crow-eval-XXXX/solution/         the task's solution/, copied only for an oracle trial
 *
 * Harbor's container paths map to these through environment variables (there is no container: a Dockerfile in
 * environment/ is not run): /app → EVAL_APP_DIR, /tests → EVAL_TESTS_DIR, /logs → EVAL_LOGS_DIR, /solution →
 * EVAL_SOLUTION_DIR. Scripts run with cwd = the workspace, in the child-process environment (no secrets, no provider settings).
 */
import { cpSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { childProcessEnvironment } from "../tools/child-env.js";
import type { EvalTask } from "./suite.js";

export interface TrialWorkspace {
  root: string;
  app: string;
  logs: string;
  tests: string;
  solution: string;
  /** Copies the task's tests/ in (after the agent is done). */
  revealTests(): void;
  /** Copies the task's solution/ in (oracle trials). */
  revealSolution(): void;
  /** The environment of test.sh and solve.sh. */
  scriptEnv(): NodeJS.ProcessEnv;
  remove(): void;
}

/** Variables a task script must not see: the provider's keys and Crow's own settings. */
/**
 * Crow's own settings and the provider's endpoint are the agent's business, not a task script's (the child-process
 * policy has already left out every secret).
 */
function isCrowsOwn(key: string): boolean {
  return key.startsWith("OPENAI_") || key.startsWith("CROW_");
}

/** A fresh workspace for one trial of `task`. */
export function createTrialWorkspace(task: EvalTask): TrialWorkspace {
  const root = mkdtempSync(path.join(tmpdir(), "crow-eval-"));
  const app = path.join(root, "app");
  const logs = path.join(root, "logs");
  const tests = path.join(root, "tests");
  const solution = path.join(root, "solution");
  mkdirSync(path.join(logs, "verifier"), { recursive: true });
  mkdirSync(path.join(logs, "agent"), { recursive: true });
  if (task.environmentDir) {
    const source = task.environmentDir;
    // The Dockerfile describes a container image, not a file of the workspace.
    cpSync(source, app, { recursive: true, filter: (from) => from !== path.join(source, "Dockerfile") });
  }
  mkdirSync(app, { recursive: true });
  return {
    root,
    app,
    logs,
    tests,
    solution,
    revealTests: () => cpSync(path.join(task.dir, "tests"), tests, { recursive: true }),
    revealSolution: () => cpSync(path.join(task.dir, "solution"), solution, { recursive: true }),
    scriptEnv: () => {
      const env: NodeJS.ProcessEnv = {};
      for (const [key, value] of Object.entries(childProcessEnvironment())) if (!isCrowsOwn(key)) env[key] = value;
      return { ...env, EVAL_APP_DIR: app, EVAL_TESTS_DIR: tests, EVAL_LOGS_DIR: logs, EVAL_SOLUTION_DIR: solution };
    },
    remove: () => rmSync(root, { recursive: true, force: true }),
  };
}

/**
 * The instruction as the agent gets it here. Harbor's instructions name the container's workspace, `/app`; without
 * a container that path is not the workspace (and may not exist, or be someone else's), so an instruction that
 * mentions it gets one line saying where `/app` is. Others are sent unchanged.
 */
export function localInstruction(instruction: string, workspace: TrialWorkspace): string {
  if (!/(^|[\s"'`(])\/app(\/|\b)/.test(instruction)) return instruction;
  return `${instruction.trimEnd()}\n\n(This task was written for a container whose working directory is /app. There is no container here: /app stands for ${workspace.app}, your working directory; use that wherever the task says /app.)\n`;
}
