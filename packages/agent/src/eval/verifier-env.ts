/**
 * Harbor's separate verifier environment (task schema 1.4, harbor.models.task.verifier_mode): with
 * `[verifier] environment_mode = "separate"`, or a `[verifier.environment]` table (which implies it), the verifier
 * does not run where the agent worked. Harbor collects the artifacts (`/logs/artifacts/` and `artifacts`), stops the
 * agent's container and starts a fresh one — built from tests/ (a step's tests/ when it has one) as the build context,
 * with `[verifier.environment]` or else a copy of `[environment]` — puts the artifacts back at their paths, and runs
 * tests/test.sh there. A step's `[steps.verifier]` `environment_mode` / `environment` override the task's.
 *
 * Without Docker, a trial does the same with a second, fresh workspace of its own: its `/app` built from
 * - tests/'s `Dockerfile`, when the build context has one (its portable steps, as dockerfile.ts applies a task's; a
 *   `COPY … /tests` is dropped: the verifier's /tests is the task's tests/ here, as always);
 * - else `FROM <docker_image>` of `[verifier.environment]` (a plain OS or language image: the host's tools, an empty
 *   /app);
 * - else, the environment being a copy of the task's, a fresh setup of the task's own environment/ — the workspace as
 *   it was before the agent.
 * The artifacts under /app and /logs are copied in (a link as a link), the rest of what the agent left is not there:
 * the verifier judges what the task declared, nothing the agent planted beside it. An environment Crow cannot build
 * here (a non-portable Dockerfile, an image that is not a plain base, or nothing to build from, which Harbor refuses
 * too) skips the task at run start with the reason.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { ARTIFACTS_DIR } from "./artifacts.js";
import { type DockerPlan, planDockerfile } from "./dockerfile.js";
import type { VerifierEnvironmentSpec } from "./hook-fields.js";
import { setUpWorkspace } from "./setup.js";
import type { EvalStep } from "./steps.js";
import type { EvalTask } from "./suite.js";
import { CONTAINER, runInTrial, STAGE } from "./trial-sandbox.js";
import { createTrialWorkspace, type TrialWorkspace } from "./workspace.js";

/** Harbor's `_resolve_mode`: the explicit mode, else separate when an environment is defined, else unset. */
function modeOf(spec: VerifierEnvironmentSpec | undefined): "shared" | "separate" | undefined {
  return spec?.mode ?? (spec?.environment ? "separate" : undefined);
}

/** Where the verifier of `task` (or of its `step`) runs: the step's mode, else the task's, else shared. */
export function verifierMode(task: EvalTask, step?: EvalStep): "shared" | "separate" {
  return modeOf(step?.verifierEnvironment) ?? modeOf(task.verifierEnvironment) ?? "shared";
}

/** How a separate verifier's workspace is made here, or why it cannot be. */
export type SeparatePlan =
  | { ok: true; what: string; docker: DockerPlan | undefined; environmentDir: string | undefined }
  | { ok: false; reason: string };

/** A `COPY`/`ADD` into /tests: the verifier's /tests is the task's tests/ here already. */
const COPY_TO_TESTS = /^\s*(?:COPY|ADD)\s+(?:--\S+\s+)*(?:\S+\s+)+\/tests\/?\s*$/i;

/** The separate verifier environment of `task` (or of its `step`), planned; undefined in shared mode. */
export function planSeparateVerifier(task: EvalTask, step?: EvalStep): SeparatePlan | undefined {
  if (verifierMode(task, step) !== "separate") return undefined;
  const defined = step?.verifierEnvironment?.environment ?? task.verifierEnvironment?.environment;
  const context = step?.testsDir ?? path.join(task.dir, "tests");
  const dockerfile = path.join(context, "Dockerfile");
  const problem = (reason: string): SeparatePlan => ({ ok: false, reason: `separate verifier environment: ${reason}` });
  if (existsSync(dockerfile)) {
    const lines = readFileSync(dockerfile, "utf8").split(/\r?\n/);
    const plan = planDockerfile(lines.filter((line) => !COPY_TO_TESTS.test(line)).join("\n"));
    if (!plan.ok) return problem(`${path.relative(task.dir, dockerfile)} ${plan.reason}`);
    return {
      ok: true,
      what: `built from ${path.relative(task.dir, dockerfile)}`,
      docker: plan,
      environmentDir: context,
    };
  }
  if (defined) {
    const image = defined.docker_image;
    if (typeof image !== "string") {
      return problem("neither a Dockerfile in tests/ nor [verifier.environment] docker_image: nothing to run it in");
    }
    const plan = planDockerfile(`FROM ${image}\n`);
    if (!plan.ok) return problem(plan.reason);
    return { ok: true, what: `FROM ${image} (the host's tools, an empty /app)`, docker: plan, environmentDir: context };
  }
  return {
    ok: true,
    what: "a fresh copy of the task's environment",
    docker: task.docker,
    environmentDir: task.environmentDir,
  };
}

/** The distinct separate verifier environments of `task` (its own, or each step's), planned: for the run's start. */
export function separateVerifiers(task: EvalTask): SeparatePlan[] {
  const plans =
    task.steps.length === 0 ? [planSeparateVerifier(task)] : task.steps.map((s) => planSeparateVerifier(task, s));
  const seen = new Set<string>();
  return plans.filter((plan): plan is SeparatePlan => {
    if (!plan) return false;
    const key = plan.ok ? plan.what : plan.reason;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** The task the separate verifier's workspace is set up and verified as: the task, with the plan's environment. */
function asVerifierTask(task: EvalTask, plan: SeparatePlan & { ok: true }): EvalTask {
  return { ...task, docker: plan.docker, environmentDir: plan.environmentDir };
}

/**
 * Copies the artifacts of the agent's workspace into the verifier's, at the same paths: /logs/artifacts/ and each
 * `artifacts` source under /app or /logs (the trial's own). The copy runs in the verifier's sandbox, the agent's /app
 * and /logs shown read-only: a link is copied as a link and followed nowhere.
 */
async function copyArtifacts(
  task: EvalTask,
  from: TrialWorkspace,
  to: TrialWorkspace,
  signal: AbortSignal,
): Promise<string> {
  const sources = [ARTIFACTS_DIR, ...task.artifacts.map((a) => a.source)].filter(
    (s) => s.startsWith(`${CONTAINER.app}/`) || s.startsWith(`${CONTAINER.logs}/`),
  );
  const script = `shopt -s dotglob
for s in "$@"; do
  case "$s" in /app/*) src=${STAGE}/app/\${s#/app/} ;; /logs/*) src=${STAGE}/logs/\${s#/logs/} ;; esac
  [ -e "$src" ] || [ -L "$src" ] || continue
  if [ -d "$src" ] && [ ! -L "$src" ]; then mkdir -p -- "$s" && cp -R -P --preserve=mode,timestamps -- "$src"/. "$s"/
  else mkdir -p -- "$(dirname -- "$s")" && cp -P --preserve=mode,timestamps --remove-destination -- "$src" "$s"; fi || echo "not copied: $s"
done`;
  const outcome = await runInTrial(
    to,
    { phase: "setup", network: false, cwd: "/", staged: { app: from.app, logs: from.logs } },
    ["bash", "-c", script, "artifacts", ...sources],
    { env: to.scriptEnv(), timeoutMs: 120_000, signal },
  );
  return outcome.output;
}

/** What a separate verifier needs: its workspace and the task as it runs there; `remove` when done. */
export interface SeparateVerifier {
  task: EvalTask;
  workspace: TrialWorkspace;
  /** One line for the record: which environment the verifier ran in. */
  note: string;
  remove(): void;
}

/**
 * Makes the separate verifier's workspace: set up fresh by `plan`, the agent's artifacts copied in. Throws with the
 * setup's reason when it cannot be made (the trial records it as the verifier's failure). `home` is Crow's home:
 * hidden from the verifier, and where a task image's cache lives.
 */
export async function prepareSeparateVerifier(
  task: EvalTask,
  plan: SeparatePlan & { ok: true },
  agentWorkspace: TrialWorkspace,
  home: string,
  signal: AbortSignal,
): Promise<SeparateVerifier> {
  const verifierTask = asVerifierTask(task, plan);
  const workspace = createTrialWorkspace(verifierTask, [home]);
  try {
    await setUpWorkspace(verifierTask, workspace, signal, home);
    const copied = await copyArtifacts(task, agentWorkspace, workspace, signal);
    const note = `[verifier in a separate environment: ${plan.what}; the agent's artifacts copied in]${copied.trim() ? `\n${copied.trim()}` : ""}`;
    return { task: verifierTask, workspace, note, remove: () => workspace.remove() };
  } catch (error) {
    workspace.remove();
    throw error;
  }
}
