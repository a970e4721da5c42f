/**
 * The edit engine: pure string functions, no file system and no MCP. The edit tool (tools/edit.ts) reads the
 * file, calls {@link editText} and writes the result. Also the agent's entry `@crow/mcp/edit` (it edits the
 * editor's buffers with it), so nothing here may import the server, MCP or Node's file system.
 */

export { BLOCK_ANCHOR_MARGIN, BLOCK_ANCHOR_THRESHOLD, blockAnchor, contextAware, similarity } from "./anchors.js";
export {
  type EditRequest,
  type EditTextResult,
  editText,
  editTextAsync,
  MAX_EDIT_FILE_SIZE,
  tooLargeToEdit,
} from "./apply.js";
export { FUZZY_WORK_LIMIT, runAsync, runSync, type Work, WorkBudget, WorkBudgetExhausted } from "./budget.js";
export { type Closest, closestLines, formatClosest } from "./closest.js";
export { type ReplacementDiffOptions, replacementDiff, withoutResultDiff } from "./diff.js";
export {
  DIFF_META_KEY,
  DRY_RUN_META_KEY,
  DRY_RUN_NOTE,
  diffFromMeta,
  diffMeta,
  type FileDiff,
  isDryRun,
  MAX_DIFF_CHARS,
} from "./diff-meta.js";
export { commonIndent, dedent, describeIndentShift, reindent } from "./indent.js";
export { type FileLock, fileLocks } from "./lock.js";
export {
  escapeNormalized,
  exact,
  indentationFlexible,
  lineTrimmed,
  type Matcher,
  multiOccurrence,
  trimmedBoundary,
  unescapeString,
  whitespaceNormalized,
} from "./matchers.js";
export {
  EditError,
  type EditErrorKind,
  type EditOutcome,
  MATCHERS,
  type MatcherEntry,
  type MatcherName,
  type Replacement,
  type ReplaceOptions,
  replace,
  replaceAsync,
} from "./replace.js";
export { type Source, type Span, searchLines, toSource } from "./source.js";
export { countLines, detectEol, hasBom, normalizeForEdit, restoreShape, type TextShape, toLf } from "./text.js";
