/**
 * Old tool results shortened in what is sent (never in the stored history): a long session resends every earlier
 * file read and command output with each request, long after the model has used them. All but the most recent
 * `keep` tool results are candidates; a long one keeps its head and tail with a line saying how much was left out
 * and that calling the tool again gives it all.
 *
 * Shortening changes the messages the provider has cached, so it is done in batches: results are shortened only once
 * the bytes it would save reach {@link BATCH_CHARS}, and what was shortened stays shortened. Which results are
 * shortened is a function of the history alone (nothing kept beside it), so a resumed session sends the same
 * messages, and as the history grows it changes only at a batch's end: the prefix cache breaks once per batch, not
 * once per request.
 */
import type { ChatMessage, ToolMessage } from "../messages.js";

/** Default number of most recent tool results sent whole (config.yaml's `keep_tool_results`). */
export const DEFAULT_KEEP_TOOL_RESULTS = 10;

/** Results up to this many characters are never shortened. */
const SHORTEN_OVER_CHARS = 2_000;
/** What a shortened result keeps: its first and last characters. */
const HEAD_CHARS = 800;
const TAIL_CHARS = 400;
/** Results are shortened once this many characters would be saved (about 8k tokens). */
export const BATCH_CHARS = 32_000;

/** The result's text shortened to its head and tail, or undefined when it is not worth it (short, or not text). */
function shortened(message: ToolMessage): string | undefined {
  const text = message.content;
  if (typeof text !== "string" || text.length <= SHORTEN_OVER_CHARS) return undefined;
  const left = text.length - HEAD_CHARS - TAIL_CHARS;
  return (
    `${text.slice(0, HEAD_CHARS)}\n[… ${left} characters of this earlier result left out to save context; ` +
    `call the tool again to see them]\n${text.slice(-TAIL_CHARS)}`
  );
}

/**
 * `messages` with the older tool results shortened (see the file's comment); the same array when nothing is. `keep`
 * is how many of the most recent tool results stay whole (`Infinity`: all).
 */
export function shortenOldToolResults(messages: readonly ChatMessage[], keep: number): readonly ChatMessage[] {
  const results: number[] = [];
  messages.forEach((m, i) => {
    if (m.role === "tool") results.push(i);
  });
  const old = results.slice(0, Math.max(0, results.length - keep));
  const replacements = new Map<number, string>();
  let pending: Array<[number, string]> = [];
  let saved = 0;
  for (const index of old) {
    const text = shortened(messages[index] as ToolMessage);
    if (text === undefined) continue;
    pending.push([index, text]);
    saved += String((messages[index] as ToolMessage).content).length - text.length;
    if (saved >= BATCH_CHARS) {
      for (const [i, t] of pending) replacements.set(i, t);
      pending = [];
      saved = 0;
    }
  }
  if (replacements.size === 0) return messages;
  return messages.map((m, i) => {
    const text = replacements.get(i);
    return text === undefined ? m : { ...(m as ToolMessage), content: text };
  });
}
