/**
 * A trial's setup: the workspace filled from environment/ — a copy of its files, or, when it has a Dockerfile, what
 * the Dockerfile's portable steps put in /app (dockerfile.ts). Every step runs in the trial's sandbox, the copies
 * too: environment/ is shown read-only at `<STAGE>/environment` and `cp` runs inside, so a link a RUN planted in
 * /app (to the home, to another directory) resolves in the sandbox's view — where the home is empty and the host
 * read-only — and a COPY never writes through it into the host. A link at the destination file itself is replaced,
 * never written through.
 */
import type { DockerStep } from "./dockerfile.js";
import { boundedOutput } from "./script.js";
import type { EvalTask } from "./suite.js";
import { CONTAINER, runInTrial, type ScriptSandbox, STAGE } from "./trial-sandbox.js";
import type { TrialWorkspace } from "./workspace.js";

/** Where the task's scripts start: the Dockerfile's last WORKDIR (inside /app), else /app. */
export function workdirOf(task: EvalTask): string {
  return task.docker?.ok ? task.docker.workdir : CONTAINER.app;
}

/** The setup output a trial keeps (its start and its end, when longer): the cause of a failure is usually in it. */
export const SETUP_OUTPUT_CHARS = 256_000;

/** Setup failed (a COPY source missing, a RUN step failing): the trial records it as its error, and the output. */
export class SetupError extends Error {
  override name = "SetupError";
  constructor(
    message: string,
    /** Everything the setup's steps printed up to the failure (bounded by {@link SETUP_OUTPUT_CHARS}). */
    readonly output = "",
  ) {
    super(message);
  }
}

const ENVIRONMENT = `${STAGE}/environment`;
const CP = "cp -R -P --preserve=mode,timestamps --remove-destination --";

/**
 * Docker's COPY and ADD, in bash: `$1` the destination, `$2` 1 when it is a directory whatever exists (it ends in `/`,
 * or several sources), `$3` 1 for ADD, then the sources (relative to environment/, wildcards as Docker's). A
 * directory's content goes into the destination (environment/'s own Dockerfile left out); a file goes to the
 * destination, or into it when that is a directory; ADD unpacks a local tar archive (compressed or not: tar tells by
 * the content, as Docker does) into the destination instead.
 */
const COPY_SCRIPT = `set -e
shopt -s nullglob dotglob
dest=$1; into=$2; add=$3; shift 3
for s in "$@"; do
  IFS= ; matches=(${ENVIRONMENT}/$s); unset IFS
  if [ "\${#matches[@]}" = 0 ]; then echo "Dockerfile COPY: $s is not in environment/" >&2; exit 3; fi
  [ "\${#matches[@]}" -gt 1 ] && into=1
  for from in "\${matches[@]}"; do
    if [ -d "$from" ]; then
      mkdir -p -- "$dest"
      for f in "$from"/*; do
        if [ "$f" -ef ${ENVIRONMENT}/Dockerfile ]; then continue; fi
        ${CP} "$f" "$dest/"
      done
    elif [ "$add" = 1 ] && [ -f "$from" ] && tar -tf "$from" >/dev/null 2>&1; then
      mkdir -p -- "$dest"
      tar -xf "$from" -C "$dest" --no-same-owner
    elif [ "$into" = 1 ] || [ -d "$dest" ]; then
      mkdir -p -- "$dest"
      ${CP} "$from" "$dest/"
    else
      mkdir -p -- "$(dirname -- "$dest")"
      ${CP} "$from" "$dest"
    fi
  done
done`;

/** How one setup step runs in the trial's sandbox, and how it is shown in the output. */
function inSandbox(
  step: DockerStep | { kind: "workdir"; dir: string },
  task: EvalTask,
  environmentDir: string,
): { sandbox: ScriptSandbox; command: string[]; shown: string; env: Record<string, string> } {
  const base = { phase: "setup" as const, cwd: CONTAINER.app };
  switch (step.kind) {
    case "copy": {
      const into = step.dest.endsWith("/") || step.sources.length > 1 ? "1" : "0";
      return {
        sandbox: { ...base, network: false, staged: { environment: environmentDir } },
        command: ["bash", "-c", COPY_SCRIPT, "copy", step.dest, into, step.add ? "1" : "0", ...step.sources],
        shown: `${step.add ? "ADD" : "COPY"} ${step.sources.join(" ")} ${step.dest}`,
        env: {},
      };
    }
    case "run":
      // Docker's WORKDIR makes its directory when missing; made here, in the sandbox, where a link in the way
      // (planted by an earlier RUN) cannot lead into the host.
      return {
        sandbox: { ...base, network: task.allowInternet },
        command: ["bash", "-c", 'mkdir -p -- "$0" && cd -- "$0" && exec bash -c "$1"', step.cwd, step.command],
        shown: `RUN ${step.command}`,
        env: { ...step.env, ...task.env.environment },
      };
    case "workdir":
      return {
        sandbox: { ...base, network: false },
        command: ["mkdir", "-p", "--", step.dir],
        shown: `WORKDIR ${step.dir}`,
        env: {},
      };
  }
}

/** Output of the setup's steps (for the record). */
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
  const environmentDir = task.environmentDir;
  if (!environmentDir) return { output: "" };
  if (plan && !plan.ok) throw new SetupError(plan.reason);
  // No Dockerfile: the workspace is a copy of environment/.
  const steps: DockerStep[] = plan?.steps ?? [{ kind: "copy", sources: ["."], dest: `${CONTAINER.app}/` }];
  let output = "";
  const deadline = Date.now() + task.buildTimeoutSec * 1000;
  const run = async (step: DockerStep | { kind: "workdir"; dir: string }) => {
    const { sandbox, command, shown, env } = inSandbox(step, task, environmentDir);
    const outcome = await runInTrial(workspace, sandbox, command, {
      env: workspace.scriptEnv(env),
      timeoutMs: Math.max(1, deadline - Date.now()),
      signal,
      maxOutputChars: SETUP_OUTPUT_CHARS,
    });
    if (step.kind === "run" || outcome.code !== 0) {
      output = boundedOutput(`${output}$ ${shown}\n${outcome.output}`, SETUP_OUTPUT_CHARS);
    }
    if (outcome.code === 0) return;
    const why = outcome.timedOut
      ? `timed out (build_timeout_sec ${task.buildTimeoutSec})`
      : `exited with ${outcome.code}`;
    const what = plan ? `Dockerfile ${shown}` : "copying environment/";
    throw new SetupError(`${what} ${why}: ${outcome.output.trim().slice(-500)}`, output);
  };
  for (const step of steps) await run(step);
  // The image ends in its WORKDIR: made, when no step made it, inside the sandbox like the rest.
  if (plan && plan.workdir !== CONTAINER.app) await run({ kind: "workdir", dir: plan.workdir });
  return { output };
}
