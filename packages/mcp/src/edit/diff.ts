/**
 * A small unified diff of an edit, built from the replacements themselves (no general diff algorithm needed):
 * each replacement touches a known range of lines, common leading/trailing lines are trimmed off, and nearby
 * changes share a hunk. Output is capped so a large replace_all does not flood the model's context.
 */

import { splitLines } from "@crow/util";
import type { Replacement } from "./replace.js";

export interface ReplacementDiffOptions {
  /** Unchanged lines shown around each change (default 3). */
  context?: number;
  /** Maximum number of diff body lines before the output is cut (default 60). */
  maxLines?: number;
  /** Longer lines are cut to this many characters (default 300). */
  maxLineLength?: number;
  /** Starts with the `--- label` / `+++ label` lines (default true; false where the file is named already). */
  header?: boolean;
}

interface Change {
  /** Line ranges [from, to) before and after the edit. */
  b0: number;
  b1: number;
  a0: number;
  a1: number;
}

/**
 * The unified diff between `before` and `after` (both LF text), where `after` is `before` with `replacements`
 * applied (sorted, non-overlapping, in `before` coordinates). `label` names the file in the header.
 */
export function replacementDiff(
  label: string,
  before: string,
  after: string,
  replacements: readonly Replacement[],
  options: ReplacementDiffOptions = {},
): string {
  const context = options.context ?? 3;
  const maxLines = options.maxLines ?? 60;
  const maxLineLength = options.maxLineLength ?? 300;
  const beforeLines = splitLines(before);
  const afterLines = splitLines(after);
  const beforeIndex = lineIndexer(before);
  const afterIndex = lineIndexer(after);

  const changes: Change[] = [];
  let shift = 0;
  for (const r of replacements) {
    const aStart = r.start + shift;
    const aEnd = aStart + r.text.length;
    shift += r.text.length - (r.end - r.start);
    // The line holding the span's end is included on both sides: it ends in the same untouched text, so when the
    // span stops at a line start (a deleted or inserted whole line) trimCommon drops it again.
    const change: Change = {
      b0: beforeIndex(r.start),
      b1: Math.min(beforeLines.length, beforeIndex(r.end) + 1),
      a0: afterIndex(aStart),
      a1: Math.min(afterLines.length, afterIndex(aEnd) + 1),
    };
    trimCommon(change, beforeLines, afterLines);
    const previous = changes[changes.length - 1];
    if (previous && change.b0 < previous.b1) {
      previous.b1 = Math.max(previous.b1, change.b1);
      previous.a1 = Math.max(previous.a1, change.a1);
    } else if (change.b0 < change.b1 || change.a0 < change.a1) {
      changes.push(change);
    }
  }

  const body: string[] = [];
  const cut = (line: string) => (line.length > maxLineLength ? `${line.slice(0, maxLineLength)}…` : line);
  let i = 0;
  while (i < changes.length) {
    // Group changes whose context would touch.
    let j = i;
    while (j + 1 < changes.length && (changes[j + 1] as Change).b0 - (changes[j] as Change).b1 <= 2 * context) j++;
    const first = changes[i] as Change;
    const last = changes[j] as Change;
    const hb0 = Math.max(0, first.b0 - context);
    const hb1 = Math.min(beforeLines.length, last.b1 + context);
    const ha0 = first.a0 - (first.b0 - hb0);
    const ha1 = last.a1 + (hb1 - last.b1);
    body.push(`@@ -${range(hb0, hb1)} +${range(ha0, ha1)} @@`);
    let at = hb0;
    for (let c = i; c <= j; c++) {
      const change = changes[c] as Change;
      for (; at < change.b0; at++) body.push(` ${cut(beforeLines[at] ?? "")}`);
      for (let k = change.b0; k < change.b1; k++) body.push(`-${cut(beforeLines[k] ?? "")}`);
      for (let k = change.a0; k < change.a1; k++) body.push(`+${cut(afterLines[k] ?? "")}`);
      at = change.b1;
    }
    for (; at < hb1; at++) body.push(` ${cut(beforeLines[at] ?? "")}`);
    i = j + 1;
  }
  if (body.length === 0) return "";
  const shown = body.length > maxLines ? body.slice(0, maxLines) : body;
  const tail = body.length > maxLines ? [`… (diff cut: ${body.length - maxLines} more lines)`] : [];
  const header = options.header === false ? [] : [`--- ${label}`, `+++ ${label}`];
  return [...header, ...shown, ...tail].join("\n");
}

/** offset → 0-based line index, for increasing offsets (a forward-only cursor, linear overall). */
function lineIndexer(text: string): (offset: number) => number {
  let offset = 0;
  let line = 0;
  return (target) => {
    if (target < offset) {
      offset = 0;
      line = 0;
    }
    for (let i = text.indexOf("\n", offset); i !== -1 && i < target; i = text.indexOf("\n", i + 1)) {
      line++;
      offset = i + 1;
    }
    return line;
  };
}

/** Drops lines both sides of a change share at its start and end. */
function trimCommon(change: Change, beforeLines: readonly string[], afterLines: readonly string[]): void {
  while (change.b0 < change.b1 && change.a0 < change.a1 && beforeLines[change.b0] === afterLines[change.a0]) {
    change.b0++;
    change.a0++;
  }
  while (change.b0 < change.b1 && change.a0 < change.a1 && beforeLines[change.b1 - 1] === afterLines[change.a1 - 1]) {
    change.b1--;
    change.a1--;
  }
}

function range(from: number, to: number): string {
  const count = to - from;
  return `${count === 0 ? from : from + 1},${count}`;
}

/**
 * A write or edit result's text without the unified diff it repeats for the model, for displays that show the diff
 * on their own (the editor's diff block, the viewer's card). The diff follows a blank line and starts at its
 * `--- `/`+++ ` header or, as edit writes it now (the first line names the file), at its first `@@` line; it runs to
 * the last line shaped as a diff line (a space, +, -, @@, "\" or the note that it was cut). What follows it (the
 * language server's diagnostics) stays. Text without a diff is returned unchanged.
 */
export function withoutResultDiff(text: string): string {
  const at = text.search(/\n\n(?:--- [^\n]*\n\+\+\+ [^\n]*\n)?@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@/);
  if (at < 0) return text;
  const lines = text.slice(at + 2).split("\n");
  let end = lines[0]?.startsWith("--- ") ? 2 : 0;
  while (end < lines.length && /^(?:[ +\-\\]|@@|… \(diff cut|$)/.test(lines[end] ?? "")) end++;
  const rest = lines.slice(end).join("\n");
  return rest === "" ? text.slice(0, at) : `${text.slice(0, at)}\n${rest}`;
}
