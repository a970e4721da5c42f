/**
 * A trial's setup: the workspace filled from environment/ — a copy of its files, or, when it has a Dockerfile, what
 * the Dockerfile's portable steps put in /app (dockerfile.ts); with an image (image-build.ts), /app as its build left
 * it, then the steps after its last RUN, over the image. Each step runs in the trial's sandbox (setup-steps.ts).
 */
import { errorText } from "@crow/core";
import { imageFor } from "./image-build.js";
import { runSetupSteps, SetupError, type SetupStep } from "./setup-steps.js";
import type { EvalTask } from "./suite.js";
import { CONTAINER } from "./trial-sandbox.js";
import type { TrialWorkspace } from "./workspace.js";

export { SETUP_OUTPUT_CHARS, SetupError } from "./setup-steps.js";

/** Where the task's scripts start: the Dockerfile's last WORKDIR (inside /app), else /app. */
export function workdirOf(task: EvalTask): string {
  return task.docker?.ok ? task.docker.workdir : CONTAINER.app;
}

/** Output of the setup's steps (for the record). */
export interface SetupOutcome {
  output: string;
  /** What the trial ran over: its image, built by this run or from the cache (image-build.ts). */
  image?: string;
}

/**
 * Fills the workspace of `task`; throws {@link SetupError} when a step fails (or its image cannot be built or
 * served). `home`: Crow's home, whose cache holds the images.
 */
export async function setUpWorkspace(
  task: EvalTask,
  workspace: TrialWorkspace,
  signal: AbortSignal,
  home: string,
): Promise<SetupOutcome> {
  const plan = task.docker;
  if (!task.environmentDir) return { output: "" };
  if (plan && !plan.ok) throw new SetupError(plan.reason);
  const options = { phase: "setup" as const, deadline: Date.now() + task.buildTimeoutSec * 1000, signal };
  // No Dockerfile: the workspace is a copy of environment/.
  const steps: SetupStep[] = [...(plan?.steps ?? [{ kind: "copy", sources: ["."], dest: `${CONTAINER.app}/` }])];
  let output = "";
  let image: string | undefined;
  if (plan?.image) {
    let served: Awaited<ReturnType<typeof imageFor>>;
    try {
      served = await imageFor(task, plan.image, home, signal);
    } catch (error) {
      if (error instanceof SetupError) throw error;
      throw new SetupError(`the image: ${errorText(error)}`);
    }
    workspace.image = served.view;
    image = served.note;
    output = `# ${served.note}${served.output ? `; its build's output:\n${served.output.trimEnd()}` : ""}\n`;
    steps.unshift({ kind: "image-app", from: served.app });
  }
  // The image ends in its WORKDIR: made, when no step made it, inside the sandbox like the rest.
  if (plan && plan.workdir !== CONTAINER.app) steps.push({ kind: "workdir", dir: plan.workdir });
  try {
    output += await runSetupSteps(task, workspace, steps, options);
  } catch (error) {
    if (error instanceof SetupError) throw new SetupError(error.message, output + error.output);
    throw error;
  }
  return { output, ...(image ? { image } : {}) };
}
