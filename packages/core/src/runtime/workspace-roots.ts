/**
 * A session's additional directories (ACP `additionalDirectories`): workspace roots besides its cwd. Checked when a
 * session opens (absolute paths of existing directories), stored with the session, named in its system prompt.
 * When a stored session is opened with a different list, its system prompt is rendered again from its stored
 * template version with the new list, so what the model reads matches what the tools allow.
 */
import { stat } from "node:fs/promises";
import path from "node:path";
import { directoriesArg, reproduceSystemPrompt } from "../prompt/system-prompt.js";
import type { SessionRecord, Store } from "../store/types.js";

/** An additional directory that cannot be one; the message names it and says what to pass instead. */
export class InvalidDirectoryError extends Error {
  override name = "InvalidDirectoryError";
}

/**
 * The list to use: each entry absolute and an existing directory (else {@link InvalidDirectoryError}), normalized,
 * without duplicates or the cwd itself (when given), in the order given.
 */
export async function checkAdditionalDirectories(dirs: readonly string[], cwd?: string): Promise<string[]> {
  const out: string[] = [];
  for (const dir of dirs) {
    if (typeof dir !== "string" || !path.isAbsolute(dir)) {
      throw new InvalidDirectoryError(`additional directory ${JSON.stringify(dir)} is not an absolute path`);
    }
    const normalized = path.resolve(dir);
    let isDirectory: boolean;
    try {
      isDirectory = (await stat(normalized)).isDirectory();
    } catch {
      throw new InvalidDirectoryError(`additional directory ${normalized} does not exist (create it, or leave it out)`);
    }
    if (!isDirectory) throw new InvalidDirectoryError(`additional directory ${normalized} is a file, not a directory`);
    if (normalized !== (cwd && path.resolve(cwd)) && !out.includes(normalized)) out.push(normalized);
  }
  return out;
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((dir, i) => dir === b[i]);
}

/**
 * Stores a loaded session's new list of additional directories (when it changed) with its system prompt rendered
 * again for it (when the session has a stored template version and arguments; a fixed prompt stays as it is).
 * Returns the record as it now is.
 */
export async function storeDirectories(store: Store, record: SessionRecord, dirs: string[]): Promise<SessionRecord> {
  if (sameList(record.additionalDirectories, dirs)) return record;
  const promptArgs = record.promptArgs ? { ...record.promptArgs, additional_directories: directoriesArg(dirs) } : null;
  const systemPrompt = promptArgs
    ? await reproduceSystemPrompt(store, { promptId: record.promptId, promptArgs })
    : undefined;
  return store.updateSession(record.id, {
    additionalDirectories: dirs,
    ...(systemPrompt !== undefined ? { systemPrompt, promptArgs } : {}),
  });
}
