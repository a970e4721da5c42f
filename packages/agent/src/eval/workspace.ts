/**
 * A trial's private directory, fresh for each trial:
 *
 *   <tmp>/crow-eval-XXXX/app/              the workspace (the agent's cwd), /app: filled at setup (setup.ts)
 *   <tmp>/crow-eval-XXXX/logs/agent/       /logs/agent
 *   <tmp>/crow-eval-XXXX/logs/verifier/    /logs/verifier: where test.sh writes reward.txt or reward.json
 *   <tmp>/crow-eval-XXXX/logs/artifacts/   /logs/artifacts: what any script leaves there is kept (artifacts.ts)
 *   <tmp>/crow-eval-XXXX/tests/            /tests for the verifier: the task's tests/, copied afresh for each run
 *   <tmp>/crow-eval-XXXX/shims/            /.crow-eval/bin, first on PATH: `python`, `pip` (python images only)
 *
 * The task's tests/ and solution/ never reach the agent's workspace: the oracle's sandbox mounts solution/ from the
 * suite read-only, the verifier's copies tests/ into its own /tests (trial-sandbox.ts), after the agent is done.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { EvalTask } from "./suite.js";
import { scriptBase, scriptEnvironment, type TrialMounts } from "./trial-sandbox.js";
import { pythonShims } from "./trial-view.js";

export interface TrialWorkspace extends TrialMounts {
  root: string;
  /** The environment of a task script, with the task's `env` table of that phase on top. */
  scriptEnv(extra?: Readonly<Record<string, string>>): NodeJS.ProcessEnv;
  remove(): void;
}

/** The directory all trial workspaces are made in (a worker's cleanup looks there). */
export function trialsParent(): string {
  return tmpdir();
}

/** A fresh workspace for one trial of `task`; `hidden`: host paths no script may see (Crow's home). */
export function createTrialWorkspace(task: EvalTask, hidden: readonly string[] = []): TrialWorkspace {
  const root = mkdtempSync(path.join(trialsParent(), "crow-eval-"));
  const app = path.join(root, "app");
  const logs = path.join(root, "logs");
  mkdirSync(path.join(logs, "verifier"), { recursive: true });
  mkdirSync(path.join(logs, "agent"), { recursive: true });
  // /logs/artifacts: Harbor's convention directory, collected after the trial (artifacts.ts).
  mkdirSync(path.join(logs, "artifacts"), { recursive: true });
  // Filled at setup (setup.ts): a copy of environment/, or what its Dockerfile puts in /app.
  mkdirSync(app, { recursive: true });
  // A python image's `python` and `pip`: links to the host's python3 and pip3 that trials see.
  let shims: string | undefined;
  if (task.docker?.ok && task.docker.python) {
    shims = path.join(root, "shims");
    mkdirSync(shims);
    for (const { name, target } of pythonShims(scriptBase().PATH)) symlinkSync(target, path.join(shims, name));
  }
  return {
    root,
    app,
    logs,
    tests: path.join(task.dir, "tests"),
    testsCopy: path.join(root, "tests"),
    solution: path.join(task.dir, "solution"),
    hidden: [task.suiteDir, ...hidden],
    ...(shims ? { shims } : {}),
    scriptEnv: (extra = {}) =>
      scriptEnvironment(scriptBase(), { ...(task.docker?.ok ? task.docker.env : {}), ...extra }, { shims: !!shims }),
    remove: () => rmSync(root, { recursive: true, force: true }),
  };
}
