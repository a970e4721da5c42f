/**
 * The steps of a trial's setup and of an image's build, each run in the trial's sandbox: a Dockerfile's COPY, ADD and
 * RUN, making its WORKDIR, copying in /app as an image's build left it. The copies run inside the sandbox too:
 * environment/ is shown read-only at `<STAGE>/environment` and `cp` runs inside, so a link a RUN planted in /app (to
 * the home, to another directory) resolves in the sandbox's view — where the home is empty and the host read-only —
 * and a COPY never writes through it into the host. A link at the destination file itself is replaced, never written
 * through.
 */
import type { DockerStep } from "./dockerfile.js";
import { boundedOutput } from "./script.js";
import type { EvalTask } from "./suite.js";
import { CONTAINER, runInTrial, type ScriptSandbox, STAGE, type TrialPhase } from "./trial-sandbox.js";
import type { TrialWorkspace } from "./workspace.js";

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

/** A step of setup: a Dockerfile's, making the image's WORKDIR, or copying in /app as the image's build left it. */
export type SetupStep = DockerStep | { kind: "workdir"; dir: string } | { kind: "image-app"; from: string };

/** How one setup step runs in the trial's sandbox, and how it is shown in the output. */
function inSandbox(
  step: SetupStep,
  task: EvalTask,
  environmentDir: string,
  phase: TrialPhase,
): { sandbox: ScriptSandbox; command: string[]; shown: string; env: Record<string, string> } {
  const base = { phase, cwd: CONTAINER.app };
  switch (step.kind) {
    case "image-app":
      return {
        sandbox: { ...base, network: false, staged: { "image-app": step.from } },
        command: ["bash", "-c", `shopt -s nullglob dotglob; for f in ${STAGE}/image-app/*; do ${CP} "$f" /app/; done`],
        shown: "(/app as the image's build left it)",
        env: {},
      };
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

/** How setup's steps run: as a trial's setup, or as an image's build (its own variables and staged files). */
export interface StepOptions {
  phase: TrialPhase;
  /** Variables every step gets besides its own. */
  env?: Readonly<Record<string, string>>;
  /** Host directories shown read-only under STAGE besides environment/. */
  staged?: Readonly<Record<string, string>>;
  deadline: number;
  signal: AbortSignal;
}

/**
 * Runs `steps` of `task` in order in `workspace`'s sandbox; resolves to their output, or throws {@link SetupError}
 * with the output so far when one fails.
 */
export async function runSetupSteps(
  task: EvalTask,
  workspace: TrialWorkspace,
  steps: readonly SetupStep[],
  options: StepOptions,
): Promise<string> {
  const environmentDir = task.environmentDir ?? "/nonexistent";
  let output = "";
  for (const step of steps) {
    const { sandbox, command, shown, env } = inSandbox(step, task, environmentDir, options.phase);
    if (options.staged) sandbox.staged = { ...sandbox.staged, ...options.staged };
    const outcome = await runInTrial(workspace, sandbox, command, {
      env: workspace.scriptEnv({ ...env, ...options.env }),
      timeoutMs: Math.max(1, options.deadline - Date.now()),
      signal: options.signal,
      maxOutputChars: SETUP_OUTPUT_CHARS,
    });
    if (step.kind === "run" || outcome.code !== 0) {
      output = boundedOutput(`${output}$ ${shown}\n${outcome.output}`, SETUP_OUTPUT_CHARS);
    }
    if (outcome.code === 0) continue;
    const why = outcome.timedOut
      ? `timed out (build_timeout_sec ${task.buildTimeoutSec})`
      : `exited with ${outcome.code}`;
    const what = task.docker ? `Dockerfile ${shown}` : "copying environment/";
    throw new SetupError(`${what} ${why}: ${outcome.output.trim().slice(-500)}`, output);
  }
  return output;
}
