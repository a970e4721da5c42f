/** Small string helpers that core, crow-mcp and the agent each needed (one definition, not one copy each). */

/** `text` with every character a regular expression gives a meaning escaped, to match it literally. */
export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Lines of LF text; a final newline ends the last line rather than starting an empty one ("" has none). */
export function splitLines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split("\n");
  if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop();
  return lines;
}

/** The message of a thrown value: an Error's message, anything else as a string. */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
