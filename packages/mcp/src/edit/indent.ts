/** Indentation helpers: measuring, removing and shifting the leading whitespace of blocks of lines. */

/** The leading spaces and tabs of `line`. */
export function leadingWhitespace(line: string): string {
  let i = 0;
  while (i < line.length && (line[i] === " " || line[i] === "\t")) i++;
  return line.slice(0, i);
}

/** True when `line` holds nothing but whitespace. */
export function isBlank(line: string): boolean {
  return line.trim() === "";
}

/**
 * The indentation shared by every non-blank line: the longest common prefix of their leading whitespace. Using the
 * common prefix rather than the minimum width keeps tabs and spaces apart (a tab is not four spaces).
 */
export function commonIndent(lines: readonly string[]): string {
  let common: string | undefined;
  for (const line of lines) {
    if (isBlank(line)) continue;
    const lead = leadingWhitespace(line);
    if (common === undefined) {
      common = lead;
      continue;
    }
    let i = 0;
    while (i < common.length && i < lead.length && common[i] === lead[i]) i++;
    common = common.slice(0, i);
    if (common === "") break;
  }
  return common ?? "";
}

/** Removes the common indentation from each line; whitespace-only lines become empty. */
export function dedent(lines: readonly string[]): string[] {
  const indent = commonIndent(lines);
  return lines.map((line) => (isBlank(line) ? "" : line.slice(indent.length)));
}

/**
 * Shifts `text` from indentation `from` to indentation `to`: on each non-blank line a leading `from` becomes `to`.
 * A line indented less than `from` (possible in `new_string`) still gets the added width when `to` extends
 * `from`, or loses as much of the removed whitespace as it has when `to` is a prefix of `from`. Blank lines are
 * left alone so no trailing whitespace is introduced.
 */
export function reindent(text: string, from: string, to: string): string {
  if (from === to) return text;
  return text
    .split("\n")
    .map((line) => {
      if (isBlank(line)) return line;
      if (line.startsWith(from)) return to + line.slice(from.length);
      if (to.startsWith(from)) return to.slice(from.length) + line;
      if (from.startsWith(to)) {
        const lead = leadingWhitespace(line);
        const removable = Math.min(lead.length, from.length - to.length);
        return line.slice(removable);
      }
      return line;
    })
    .join("\n");
}

/** Describes an indentation change for the model, e.g. "+4 spaces", "-1 tab", "4 spaces → 1 tab". */
export function describeIndentShift(from: string, to: string): string {
  if (to.startsWith(from)) return `+${describeWhitespace(to.slice(from.length))}`;
  if (from.startsWith(to)) return `-${describeWhitespace(from.slice(to.length))}`;
  return `${describeWhitespace(from) || "none"} → ${describeWhitespace(to) || "none"}`;
}

function describeWhitespace(ws: string): string {
  const tabs = ws.split("\t").length - 1;
  const spaces = ws.length - tabs;
  const parts: string[] = [];
  if (spaces > 0) parts.push(`${spaces} space${spaces === 1 ? "" : "s"}`);
  if (tabs > 0) parts.push(`${tabs} tab${tabs === 1 ? "" : "s"}`);
  return parts.join(" + ");
}
