/** The message of a thrown value: an Error's message, anything else as a string. (crow-mcp's own copy of core's
 * `errorText`: the toolserver imports nothing of core.) */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
