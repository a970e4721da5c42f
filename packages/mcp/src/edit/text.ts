/**
 * How a file's text is framed: a UTF-8 byte-order mark and its line endings. The matchers work on LF text; these
 * helpers take a file apart into that form and put it back together unchanged apart from the edit.
 */

/** The framing of a text file. */
export interface TextShape {
  /** The file started with a UTF-8 BOM (EF BB BF). */
  bom: boolean;
  /**
   * "\r\n" when every line break is CRLF, "\n" when every one is LF or the text has none, "mixed" otherwise.
   * Mixed files are matched as they are, so untouched lines keep their own endings.
   */
  eol: "\n" | "\r\n" | "mixed";
}

/** True when `bytes` start with the UTF-8 byte-order mark. */
export function hasBom(bytes: Uint8Array): boolean {
  return bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
}

/** Classifies the line endings of `text`. */
export function detectEol(text: string): TextShape["eol"] {
  let lf = 0;
  let crlf = 0;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) {
    if (i > 0 && text.charCodeAt(i - 1) === 13) crlf++;
    else lf++;
    if (lf > 0 && crlf > 0) return "mixed";
  }
  return crlf > 0 ? "\r\n" : "\n";
}

/** CRLF → LF. */
export function toLf(text: string): string {
  return text.includes("\r\n") ? text.replace(/\r\n/g, "\n") : text;
}

/**
 * Prepares a file's decoded text (BOM already removed) and the model's strings for matching: a CRLF file is
 * matched as LF with the strings normalized to LF; an LF file gets LF strings; a mixed file is matched verbatim.
 */
export function normalizeForEdit(
  text: string,
  oldString: string,
  newString: string,
): { eol: TextShape["eol"]; content: string; oldString: string; newString: string } {
  const eol = detectEol(text);
  if (eol === "mixed") return { eol, content: text, oldString, newString };
  return { eol, content: eol === "\r\n" ? toLf(text) : text, oldString: toLf(oldString), newString: toLf(newString) };
}

/** Puts an edited LF text back into the file's framing. */
export function restoreShape(text: string, shape: TextShape): string {
  const body = shape.eol === "\r\n" ? text.replace(/\n/g, "\r\n") : text;
  return shape.bom ? `\uFEFF${body}` : body;
}

/** Number of lines in `content` as an editor counts them: a final newline does not start a new line. */
export function countLines(content: string): number {
  if (content === "") return 0;
  let lines = 1;
  for (let i = content.indexOf("\n"); i !== -1; i = content.indexOf("\n", i + 1)) lines++;
  return content.endsWith("\n") ? lines - 1 : lines;
}
