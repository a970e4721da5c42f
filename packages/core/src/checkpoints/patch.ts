/**
 * The diff a turn made, as a unified patch read from the shadow repository (for the viewer's timeline). Only on the
 * host that took the checkpoint, whose repository it is; elsewhere, or once collected, there is none.
 */
import { access } from "node:fs/promises";
import { hostname } from "node:os";
import type { CheckpointRecord } from "../store/checkpoint-types.js";
import { findGit, objectId, runGit } from "./git.js";
import { shadowGitDir } from "./shadow-repo.js";

/** The turn's patch (at most `maxBytes`, cut with a note), or undefined when this host cannot read it. */
export async function checkpointPatch(
  home: string,
  record: CheckpointRecord,
  maxBytes = 64_000,
  host: string = hostname(),
): Promise<string | undefined> {
  if (!record.after || record.host !== host) return undefined;
  const gitDir = shadowGitDir(home, record.workspace);
  try {
    await access(gitDir);
    // Read-only: the repository itself serves as work tree, so a workspace removed since does not matter.
    // Never a git inside the workspace (a PATH entry such as its .venv/bin), nor a textconv program.
    const git = findGit([record.workspace]);
    const { stdout } = await runGit(git, gitDir, gitDir, [
      "diff-tree",
      "-p",
      "--no-color",
      "--no-ext-diff",
      "--no-textconv",
      "--no-renames",
      objectId(record.before),
      objectId(record.after),
    ]);
    const text = stdout.toString("utf8");
    return text.length > maxBytes ? `${text.slice(0, maxBytes)}\n… (cut at ${maxBytes} bytes)` : text;
  } catch {
    return undefined;
  }
}
