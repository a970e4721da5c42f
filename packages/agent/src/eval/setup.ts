/**
 * A trial's setup: the workspace filled from environment/ — a copy of its files, or, when it has a Dockerfile, what
 * the Dockerfile's portable steps put in /app (dockerfile.ts), `RUN` steps executed in the trial's sandbox.
 */
import { cpSync, existsSync, mkdirSync, statSync } from "node:fs";
import path from "node:path";
import type { DockerStep } from "./dockerfile.js";
import { runScript } from "./script.js";
import type { EvalTask } from "./suite.js";
import { CONTAINER, trialSandboxArgs } from "./trial-sandbox.js";
import type { TrialWorkspace } from "./workspace.js";

/** Where the task's scripts start: the Dockerfile's last WORKDIR (inside /app), else /app. */
export function workdirOf(task: EvalTask): string {
  return task.docker?.ok ? task.docker.workdir : CONTAINER.app;
}

/** Setup failed (a COPY source missing, a RUN step failing): the trial records it as its error. */
export class SetupError extends Error {
  override name = "SetupError";
}

/** The host path of `target`, a path in the container under /app. */
function onHost(workspace: TrialWorkspace, target: string): string {
  return path.join(workspace.app, path.posix.relative(CONTAINER.app, target));
}

/** Docker's COPY: a directory's content goes into dest; a file goes to dest, or into it when dest ends in `/`. */
function copy(environmentDir: string, workspace: TrialWorkspace, step: Extract<DockerStep, { kind: "copy" }>): void {
  const dest = onHost(workspace, step.dest);
  for (const source of step.sources) {
    const from = path.join(environmentDir, source);
    if (!existsSync(from)) throw new SetupError(`Dockerfile COPY: ${source} is not in environment/`);
    if (statSync(from).isDirectory()) {
      const dockerfile = path.join(environmentDir, "Dockerfile");
      cpSync(from, dest, { recursive: true, filter: (f) => f !== dockerfile });
    } else {
      const into =
        step.dest.endsWith("/") || step.sources.length > 1 || (existsSync(dest) && statSync(dest).isDirectory());
      cpSync(from, into ? path.join(dest, path.basename(source)) : dest);
    }
  }
}

/** Output of the setup's RUN steps (for the record). */
export interface SetupOutcome {
  output: string;
}

/** Fills the workspace of `task`; throws {@link SetupError} when a step fails. */
export async function setUpWorkspace(
  task: EvalTask,
  workspace: TrialWorkspace,
  signal: AbortSignal,
): Promise<SetupOutcome> {
  const plan = task.docker;
  if (!task.environmentDir) return { output: "" };
  if (!plan) {
    // No Dockerfile: the workspace is a copy of environment/.
    cpSync(task.environmentDir, workspace.app, { recursive: true });
    return { output: "" };
  }
  if (!plan.ok) throw new SetupError(plan.reason);
  let output = "";
  const deadline = Date.now() + task.buildTimeoutSec * 1000;
  for (const step of plan.steps) {
    // Docker's WORKDIR makes its directory when missing; a RUN starts there.
    if (step.kind === "run") mkdirSync(onHost(workspace, step.cwd), { recursive: true });
    if (step.kind === "copy") {
      copy(task.environmentDir, workspace, step);
      continue;
    }
    const sandbox = trialSandboxArgs(workspace, { phase: "setup", network: task.allowInternet, cwd: step.cwd });
    const outcome = await runScript([...sandbox, "bash", "-c", step.command], {
      env: workspace.scriptEnv({ ...step.env, ...task.env.environment }),
      timeoutMs: Math.max(1, deadline - Date.now()),
      signal,
    });
    output = `${output}$ ${step.command}\n${outcome.output}`.slice(-16_000);
    if (outcome.code !== 0) {
      const why = outcome.timedOut
        ? `timed out (build_timeout_sec ${task.buildTimeoutSec})`
        : `exited with ${outcome.code}`;
      throw new SetupError(`Dockerfile RUN ${step.command} ${why}: ${outcome.output.trim().slice(-500)}`);
    }
  }
  mkdirSync(onHost(workspace, plan.workdir), { recursive: true });
  return { output };
}
