/** What the result of a file-changing call (write, edit) shows: the file, and the diff its server returned. */
import type { ToolDisplay } from "@crow/core";
import { diffFromMeta } from "@crow/mcp/edit";
import { diffDisplay } from "../diff.js";
import { fileLocations, located } from "./profile.js";

/**
 * The file a write or edit changed, and unless it failed the diff from its server's `_meta["crow/diff"]` (the agent
 * reads no file, so a remote toolserver's change shows as well), located at its first changed line.
 */
export function changedFile(args: Record<string, unknown>, meta: unknown, failed: boolean): ToolDisplay {
  const diff = failed ? undefined : diffFromMeta(meta);
  return diff ? diffDisplay(diff) : located(fileLocations(args));
}
