/**
 * Before a run's trials: the image of each task that has one (image-build.ts) built, or found in the cache, so that
 * a task whose image cannot be built is skipped with the reason — as one the host cannot stand in for is — rather
 * than failed in every trial. Trials then take the image this process already holds.
 */
import { errorText } from "@crow/core";
import { imageFor } from "./image-build.js";
import type { EvalTask } from "./suite.js";

/** The tasks whose image is ready (and those without one); `say` tells stderr about each image and each skip. */
export async function withImagesReady(
  tasks: readonly EvalTask[],
  home: string,
  say: (task: EvalTask, text: string) => void,
): Promise<EvalTask[]> {
  const ready: EvalTask[] = [];
  // Ctrl-C before the trials start ends the process: the build's sandbox dies with it, its mounts with the namespace.
  const signal = new AbortController().signal;
  for (const task of tasks) {
    const image = task.docker?.ok ? task.docker.image : undefined;
    if (!image) {
      ready.push(task);
      continue;
    }
    try {
      const served = await imageFor(task, image, home, signal);
      say(task, served.note);
      ready.push(task);
    } catch (error) {
      const why = errorText(error);
      say(task, `skipped: needs the image: ${image.why.join("; ")}; building it failed: ${why}`);
    }
  }
  return ready;
}
