/**
 * The change a write or edit made, carried in its result's `_meta` under {@link DIFF_META_KEY}, so a client shows
 * the diff without reading the file itself (it may not even see the toolserver's disk). Pure data: shared with the
 * agent through `@crow/mcp/edit`.
 */

/** `_meta` key of a successful write's or edit's result: `{ path, oldText, newText }`. */
export const DIFF_META_KEY = "crow/diff";

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
