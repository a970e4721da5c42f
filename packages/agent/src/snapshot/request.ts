/**
 * The other half of the `crow` launcher (bundle/crow): when it found no startup snapshot for this start, it runs
 * crow.js with CROW_SNAPSHOT_BLOB naming the blob it looked for, and this builds that blob in the background, so that
 * the next start is a snapshot start (snapshot/entry.ts says what that saves).
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { buildFailed } from "./toolserver.js";

/** The variable the launcher sets. */
const SNAPSHOT_BLOB_VARIABLE = "CROW_SNAPSHOT_BLOB";

/** The commands that start the agent: the ones a snapshot speeds up (`crow --version` in a loop should not build). */
const AGENT_COMMANDS = new Set(["acp", "run"]);

/**
 * Takes the launcher's request out of `env` (nothing crow starts, shells included, inherits it) and, for a command
 * that starts the agent, spawns the builder (bundle/crow-snapshot-build.js, beside this module in the bundle) detached,
 * unless a build of that blob already failed with this node. Never throws: a start without a snapshot is only a
 * slower start.
 */
export function buildSnapshotInBackground(args: readonly string[], env: NodeJS.ProcessEnv = process.env): void {
  const blob = env[SNAPSHOT_BLOB_VARIABLE];
  delete env[SNAPSHOT_BLOB_VARIABLE];
  if (!blob || !path.isAbsolute(blob) || !AGENT_COMMANDS.has(args[0] ?? "")) return;
  try {
    const builder = path.join(path.dirname(fileURLToPath(import.meta.url)), "crow-snapshot-build.js");
    if (!existsSync(builder) || buildFailed(blob)) return;
    // A one-off process: Node's compile cache would only store its code (and write after its parent is gone).
    const builderEnv: NodeJS.ProcessEnv = { ...env, NODE_DISABLE_COMPILE_CACHE: "1" };
    delete builderEnv.NODE_COMPILE_CACHE;
    const child = spawn(process.execPath, [builder, blob], { detached: true, stdio: "ignore", env: builderEnv });
    child.on("error", () => {});
    child.unref();
  } catch {
    // Starting matters more than starting faster next time.
  }
}
