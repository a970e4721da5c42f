/**
 * The edit engine: pure string functions, no file system and no MCP. The edit tool (tools/edit.ts) reads the
 * file, calls {@link replace} and writes the result.
 */
export { BLOCK_ANCHOR_MARGIN, BLOCK_ANCHOR_THRESHOLD, blockAnchor, contextAware, similarity } from "./anchors.js";
export { type Closest, closestLines, formatClosest } from "./closest.js";
export { type DiffOptions, unifiedDiff } from "./diff.js";
export { commonIndent, dedent, describeIndentShift, reindent } from "./indent.js";
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
  replace,
} from "./replace.js";
export { type Source, type Span, searchLines, toSource } from "./source.js";
export { detectEol, hasBom, normalizeForEdit, restoreShape, type TextShape, toLf } from "./text.js";
