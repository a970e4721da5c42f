/**
 * The read tool's text format, as a dependency-free module: crow-mcp's `read` uses it, and the agent uses it too
 * (subpath export `@crow/mcp/read-format`) when it reads through the editor, so both paths give the model
 * byte-identical output.
 */

/** Lines returned when no limit is given. */
export const DEFAULT_LINE_LIMIT = 2000;
/** Longer lines are cut to this many characters. */
export const MAX_LINE_LENGTH = 2000;

/**
 * Formats lines `offset`… (at most `limit`) of `text`. `numbered`: each line as its number, a tab, the line (as
 * `cat -n` does, without its padding: the padded `N→` of earlier versions cost a model twice the tokens per line);
 * otherwise the lines as they are. The read tool numbers the lines of a call that passed `offset` or `limit` (a model
 * working by line numbers: after a diagnostic, a `grep -n`, to cite lines) and gives a whole-file read as it is,
 * as pi's and Gemini CLI's reads do: there the numbers were about 11 % of a source file's tokens, resent with every
 * later request. A final newline ends the last line rather than starting an empty one, and a CR before the newline
 * is not shown. A cut file says which lines it shows and the offset to go on from, numbered or not.
 */
export function formatLines(text: string, offset: number, limit: number, numbered = true): string {
  const lines = text.split("\n");
  if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop();
  const total = lines.length;
  const start = Math.max(0, offset - 1);
  if (start >= total) {
    return `<system-reminder>\nThe file has ${total} lines; offset ${offset} is past its end. Use an offset between 1 and ${total}.\n</system-reminder>`;
  }
  const end = Math.min(total, start + limit);
  let truncatedLines = false;
  const out: string[] = [];
  for (let i = start; i < end; i++) {
    let line = lines[i] ?? "";
    if (line.endsWith("\r")) line = line.slice(0, -1);
    if (line.length > MAX_LINE_LENGTH) {
      line = `${line.slice(0, MAX_LINE_LENGTH)}... [line truncated]`;
      truncatedLines = true;
    }
    out.push(numbered ? `${i + 1}\t${line}` : line);
  }
  let result = out.join("\n");
  if (end < total) {
    result += `\n\n[File truncated: showing lines ${start + 1}-${end} of ${total} total. Use offset=${end + 1} to continue, or offset and limit parameters to read other sections.]`;
  }
  if (truncatedLines) result += `\n\n[Some lines exceeded ${MAX_LINE_LENGTH} characters and were truncated.]`;
  return result;
}
