/**
 * The change a write or edit made, carried in its result's `_meta` under {@link DIFF_META_KEY}, so a client shows
 * the diff without reading the file itself (it may not even see the toolserver's disk). Pure data: shared with the
 * agent through `@crow/mcp/edit`.
 */

/** `_meta` key of a successful write's or edit's result: `{ path, oldText, newText }`. */
export const DIFF_META_KEY = "crow/diff";

/**
 * `_meta` key of a write or edit call asking for a dry run (`true`): the call is validated exactly as a real one
 * (path, sandbox, the edit's match) and answers with the diff it would make, writing nothing. A tool that supports
 * it says so with the same key (`true`) in its `tools/list` entry's `_meta`: a client asks only such tools, since
 * another server would ignore the key and write.
 */
export const DRY_RUN_META_KEY = "crow/dryRun";

/** Whether a call's `_meta` (or a tool's `tools/list` `_meta`) has the dry-run flag. */
export function isDryRun(meta: unknown): boolean {
  return typeof meta === "object" && meta !== null && (meta as Record<string, unknown>)[DRY_RUN_META_KEY] === true;
}

/** Said before a dry run's message: nothing changed. */
export const DRY_RUN_NOTE = "Dry run: nothing was written.";

/** Texts longer than this get no diff (editors choke on huge diffs, and the message would be as big as the file). */
export const MAX_DIFF_CHARS = 1024 * 1024;

/** A file's text before (null: the file was created) and after a change. */
export interface FileDiff {
  path: string;
  oldText: string | null;
  newText: string;
}

/** The `_meta` of a result that changed `path` (undefined: no diff to show, e.g. binary or too big). */
export function diffMeta(
  path: string,
  oldText: string | null | undefined,
  newText: string,
): Record<string, FileDiff> | undefined {
  if (oldText === undefined || newText.length > MAX_DIFF_CHARS || (oldText?.length ?? 0) > MAX_DIFF_CHARS) {
    return undefined;
  }
  if (newText.includes("\0") || oldText?.includes("\0")) return undefined;
  return { [DIFF_META_KEY]: { path, oldText, newText } };
}

/** The diff a result's `_meta` carries, when it has a well-formed one. */
export function diffFromMeta(meta: unknown): FileDiff | undefined {
  if (typeof meta !== "object" || meta === null) return undefined;
  const diff = (meta as Record<string, unknown>)[DIFF_META_KEY];
  if (typeof diff !== "object" || diff === null) return undefined;
  const { path, oldText, newText } = diff as Record<string, unknown>;
  if (typeof path !== "string" || typeof newText !== "string") return undefined;
  if (oldText !== null && typeof oldText !== "string") return undefined;
  return { path, oldText, newText };
}
