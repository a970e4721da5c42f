/**
 * The plan as `crow run` prints it: a heading with the progress, then one line per entry (a status mark and the
 * step; on a TTY each line is cut to the terminal width so the block can be redrawn in place).
 */
import type { PlanEntry } from "@agentclientprotocol/sdk";
import type { Style } from "./ansi.js";

const PLAIN_MARK = { completed: "[x]", in_progress: "[~]", pending: "[ ]" } as const;

/** The lines of a plan (no line breaks inside; `fit` shortens a text to the line width). */
export function planLines(
  entries: readonly PlanEntry[],
  s: Style,
  tty: boolean,
  fit: (text: string, reserve: number) => string,
): string[] {
  const mark = { completed: s.green("✓"), in_progress: s.cyan("◐"), pending: s.dim("○") };
  const line = (e: PlanEntry) => {
    if (!tty) return `  ${PLAIN_MARK[e.status]} ${e.content.replace(/\s*\n\s*/g, " ")}`;
    const text = fit(e.content, 6);
    const shown = e.status === "completed" ? s.dim(text) : e.status === "in_progress" ? s.bold(text) : text;
    return `  ${mark[e.status]} ${shown}`;
  };
  const done = entries.filter((e) => e.status === "completed").length;
  return [s.bold(`Plan (${done}/${entries.length})`), ...entries.map(line)];
}
