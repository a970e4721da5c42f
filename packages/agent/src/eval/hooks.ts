/**
 * Harbor's hooks around the agent's part of a trial, as its trial runner has them (harbor.trial.multi_step and
 * trial.py):
 *
 * - **A step's `workdir/`** (multi-step tasks): before the step's agent (or oracle), the files of
 *   `steps/<name>/workdir/` are copied into the environment's working directory (the Dockerfile's WORKDIR, /app
 *   without one), and when it holds `setup.sh`, `bash <workdir>/setup.sh` runs there — in the agent's environment,
 *   with its network. A setup.sh that fails ends the step before its agent, without a verifier, and so the trial.
 * - **Collect hooks** (`[[verifier.collect]]`, and a step's `[[steps.verifier.collect]]` after the task's): after the
 *   agent's part and before the verifier, each `command` runs in the agent's environment (`service = "main"`, the
 *   default) under its `timeout_sec` (60), to snapshot state into files (`/logs/artifacts/…`) the verifier or the
 *   record reads. Best effort, as in Harbor: a hook that fails is recorded, never fails the trial. A hook for another
 *   compose service cannot run here (a trial has no services besides the agent's): noted, not run.
 *
 * Both run in the trial's sandbox like every task script: the copy too (the workdir/ shown read-only at
 * `<STAGE>/workdir`, `cp` inside), so a link planted in /app cannot lead it into the host.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { type CollectHook, MAIN_SERVICE } from "./hook-fields.js";
import { boundedOutput } from "./script.js";
import { workdirOf } from "./setup.js";
import type { EvalTask } from "./suite.js";
import { runInTrial, STAGE } from "./trial-sandbox.js";
import type { TrialWorkspace } from "./workspace.js";

/** What the hooks printed, kept with the trial (bounded like a setup's output, start and end). */
const HOOK_OUTPUT_CHARS = 64_000;

/** The outcome of a step's workdir copy and setup.sh: what they printed, and why the step cannot go on, if so. */
export interface HookOutcome {
  output: string;
  error: string | null;
}

/**
 * Before a step: copies `workdir` into the task's working directory and runs its `setup.sh` there (Harbor's step
 * setup hook). `timeoutSec` bounds both (Harbor gives the hook no timeout of its own: the step's agent timeout here).
 */
export async function runStepSetup(
  task: EvalTask,
  workspace: TrialWorkspace,
  workdir: string,
  timeoutSec: number,
  signal: AbortSignal,
): Promise<HookOutcome> {
  const cwd = workdirOf(task);
  const deadline = Date.now() + timeoutSec * 1000;
  // tar, as a container upload does: a link the agent left where the workdir has a directory or a file is replaced,
  // not written through (cp refuses a directory over a link).
  const copy = 'mkdir -p -- "$1" && tar -C "$0" -cf - . | tar -C "$1" -xf - --no-same-owner';
  const copied = await runInTrial(
    workspace,
    { phase: "setup", network: false, cwd: "/", staged: { workdir } },
    ["bash", "-c", copy, `${STAGE}/workdir`, cwd],
    { env: workspace.scriptEnv(), timeoutMs: Math.max(1, deadline - Date.now()), signal },
  );
  if (copied.code !== 0) {
    return { output: copied.output, error: `copying the step's workdir/ into ${cwd} failed: ${copied.output.trim()}` };
  }
  if (!existsSync(path.join(workdir, "setup.sh"))) return { output: "", error: null };
  const script = `${cwd.replace(/\/$/, "")}/setup.sh`;
  const ran = await runInTrial(workspace, { phase: "setup", network: task.agentInternet, cwd }, ["bash", script], {
    env: workspace.scriptEnv(task.env.environment),
    timeoutMs: Math.max(1, deadline - Date.now()),
    signal,
    maxOutputChars: HOOK_OUTPUT_CHARS,
  });
  const output = `$ bash ${script}\n${ran.output}`;
  if (ran.timedOut) return { output, error: `setup.sh timed out after ${timeoutSec}s` };
  if (ran.code !== 0) return { output, error: `setup.sh exited with ${ran.code}: ${ran.output.trim().slice(-300)}` };
  return { output, error: null };
}

/** After the agent's part: the collect hooks in order, best effort; resolves to what they printed (for the record). */
export async function runCollectHooks(
  task: EvalTask,
  workspace: TrialWorkspace,
  hooks: readonly CollectHook[],
  signal: AbortSignal,
): Promise<string> {
  let output = "";
  for (const hook of hooks) {
    if (signal.aborted) break;
    if (hook.service !== MAIN_SERVICE) {
      output += `$ ${hook.command}\n[not run: service ${hook.service} — a trial has no compose services]\n`;
      continue;
    }
    const ran = await runInTrial(
      workspace,
      { phase: "setup", network: task.agentInternet, cwd: workdirOf(task) },
      ["bash", "-c", hook.command],
      {
        env: workspace.scriptEnv(task.env.environment),
        timeoutMs: hook.timeoutSec * 1000,
        signal,
        maxOutputChars: HOOK_OUTPUT_CHARS,
      },
    );
    const how = ran.timedOut ? `timed out after ${hook.timeoutSec}s` : ran.code === 0 ? "" : `exited with ${ran.code}`;
    output += `$ ${hook.command}\n${ran.output}${how ? `[collect hook ${how}; the trial goes on]\n` : ""}`;
  }
  return boundedOutput(output, HOOK_OUTPUT_CHARS);
}
