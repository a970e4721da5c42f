/**
 * What a change did to the diagnostics: the ones after it that were not there before (a multiset difference, so two
 * identical errors where there was one count as one new), and how that reads in a tool result. A diagnostic's
 * identity leaves its position out: an edit above it moves it without making it new.
 */
import path from "node:path";

export type Severity = "error" | "warning" | "information" | "hint";

/** One diagnostic of one file; line and column count from 1 (column in UTF-16 code units, as LSP gives them). */
export interface Diagnostic {
  /** Absolute path. */
  file: string;
  line: number;
  column: number;
  severity: Severity;
  code?: string;
  message: string;
}

/** `_meta` key of a write's or edit's result carrying the new diagnostics for the client (`DiagnosticsMeta`). */
export const DIAGNOSTICS_META_KEY = "crow/diagnostics";

/** The `_meta[DIAGNOSTICS_META_KEY]` of a result: what the text section says, as data. */
export interface DiagnosticsMeta {
  language: string;
  /** New errors and warnings (capped as the text is). */
  added: Diagnostic[];
  /** How many new errors and warnings there were before the caps. */
  total: number;
  /** How many of them were errors (absent: count `added`). */
  totalErrors?: number;
  /** Errors before the change, all gone after it. */
  fixed: number;
}

/** At most this many new errors, and warnings, are listed. */
const MAX_ERRORS = 20;
const MAX_WARNINGS = 5;
/** Each message is cut to its first line and this many characters; the whole section to this many. */
const MAX_MESSAGE_CHARS = 300;
const MAX_SECTION_CHARS = 4000;

function identity(d: Diagnostic): string {
  return `${d.file}\0${d.severity}\0${d.code ?? ""}\0${d.message}`;
}

/** The diagnostics of `after` that `before` had no counterpart for. */
export function added(before: readonly Diagnostic[], after: readonly Diagnostic[]): Diagnostic[] {
  const counts = new Map<string, number>();
  for (const d of before) counts.set(identity(d), (counts.get(identity(d)) ?? 0) + 1);
  const result: Diagnostic[] = [];
  for (const d of after) {
    const left = counts.get(identity(d)) ?? 0;
    if (left > 0) counts.set(identity(d), left - 1);
    else result.push(d);
  }
  return result;
}

/** What goes into the result for a change from `before` to `after`; undefined: nothing worth saying. */
export function summarizeChange(
  language: string,
  before: readonly Diagnostic[],
  after: readonly Diagnostic[],
): DiagnosticsMeta | undefined {
  const fresh = added(before, after);
  const allErrors = fresh.filter((d) => d.severity === "error");
  const allWarnings = fresh.filter((d) => d.severity === "warning");
  const errors = allErrors.slice(0, MAX_ERRORS);
  const warnings = allWarnings.slice(0, MAX_WARNINGS);
  const errorsBefore = before.filter((d) => d.severity === "error").length;
  const errorsAfter = after.filter((d) => d.severity === "error").length;
  const fixed = errorsBefore > 0 && errorsAfter === 0 ? errorsBefore : 0;
  if (errors.length === 0 && warnings.length === 0 && fixed === 0) return undefined;
  const total = allErrors.length + allWarnings.length;
  return { language, added: [...errors, ...warnings], total, totalErrors: allErrors.length, fixed };
}

/** `file` as the model should read it: relative to the workspace when inside it. */
function shown(file: string, root: string): string {
  const relative = path.relative(root, file);
  return relative !== "" && !relative.startsWith("..") && !path.isAbsolute(relative) ? relative : file;
}

/** The text section appended to the tool result (`root`: the session's working directory, for shorter paths). */
export function formatSection(meta: DiagnosticsMeta, root: string): string {
  const fixed =
    meta.fixed === 0
      ? undefined
      : meta.fixed === 1
        ? "the 1 error reported before this change is fixed."
        : `all ${meta.fixed} errors reported before this change are fixed.`;
  if (meta.added.length === 0) return `Diagnostics (${meta.language}): ${fixed ?? "nothing new."}`;
  const fixedLine = fixed ? [`${fixed.charAt(0).toUpperCase()}${fixed.slice(1)}`] : [];
  const errors = meta.totalErrors ?? meta.added.filter((d) => d.severity === "error").length;
  const warnings = meta.total - errors;
  const counts = [
    errors > 0 ? `${errors} error${errors === 1 ? "" : "s"}` : "",
    warnings > 0 ? `${warnings} warning${warnings === 1 ? "" : "s"}` : "",
  ]
    .filter(Boolean)
    .join(", ");
  const lines = [`Diagnostics (${meta.language}) this change introduced: ${counts}`];
  let size = (lines[0]?.length ?? 0) + (fixedLine[0]?.length ?? 0);
  let listed = 0;
  for (const d of meta.added) {
    const message = (d.message.split("\n")[0] ?? "").slice(0, MAX_MESSAGE_CHARS);
    const code = d.code ? ` ${d.code}` : "";
    const line = `${shown(d.file, root)}:${d.line}:${d.column} ${d.severity}${code}: ${message}`;
    if (size + line.length + 1 > MAX_SECTION_CHARS) break;
    lines.push(line);
    size += line.length + 1;
    listed++;
  }
  if (listed < meta.total) lines.push(`(${meta.total - listed} more not shown)`);
  return [...lines, ...fixedLine].join("\n");
}
