/**
 * The runtime's checkpoint setup (options `checkpoints`): the shadow repositories under `<home>/checkpoints/`, the
 * built-in extensions that take checkpoints and answer `/rewind`, the sessions' rewinder, and the daily garbage
 * collection, started in the background a few seconds after the runtime (it may run `git gc`).
 */

import { collectCheckpointsDaily } from "../checkpoints/gc.js";
import { ShadowRepos } from "../checkpoints/repos.js";
import type { CheckpointSettings } from "../checkpoints/types.js";
import type { Extension, Logger } from "../extensions/api.js";
import { checkpointsExtension, rewindCommands } from "../extensions/checkpoints.js";
import type { Store } from "../store/types.js";
import { makeRewinder, type Rewinder } from "./rewinder.js";

const GC_DELAY_MS = 5_000;

export interface Checkpointing {
  /** Named built-in extensions, in order: `checkpoints` (when on) and `rewind`. */
  builtins: Array<{ name: string; extension: Extension }>;
  rewinder: Rewinder;
  /**
   * Stops the daily collection: not started yet, it never starts; running, it is awaited (it writes under the
   * checkpoints folder, which whoever closed the runtime may remove next).
   */
  close(): Promise<void>;
}

export function setupCheckpoints(
  store: Store | undefined,
  home: string,
  settings: CheckpointSettings | false | undefined,
  logger: Logger,
): Checkpointing {
  const chosen = settings === false ? { enabled: false } : (settings ?? {});
  const guard = {
    ...(chosen.untrustedDirs ? { untrusted: chosen.untrustedDirs } : {}),
    ...(chosen.secretFiles ? { secrets: chosen.secretFiles } : {}),
  };
  const repos =
    store && chosen.enabled !== false
      ? new ShadowRepos(home, (chosen.maxFileMb ?? 10) * 1024 * 1024, undefined, guard)
      : undefined;
  const builtins: Checkpointing["builtins"] = [];
  let gc: NodeJS.Timeout | undefined;
  let collecting: Promise<void> | undefined;
  if (store && repos) {
    builtins.push({ name: "checkpoints", extension: checkpointsExtension({ store, repos }) });
    const keepDays = chosen.keepDays ?? 30;
    gc = setTimeout(() => {
      collecting = collectCheckpointsDaily(store, home, repos.host, keepDays, (message) => logger.warn(message), guard);
    }, GC_DELAY_MS);
    gc.unref();
  }
  builtins.push({ name: "rewind", extension: rewindCommands });
  return {
    builtins,
    rewinder: makeRewinder(store, repos),
    async close() {
      clearTimeout(gc);
      await collecting;
    },
  };
}
