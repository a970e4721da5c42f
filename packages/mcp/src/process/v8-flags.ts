/**
 * V8 settings for Crow's long-lived processes, which mostly wait on I/O. `SHARED_V8_FLAGS` are what both executables
 * use: the young generation keeps its initial 1 MB semi-spaces instead of growing to 16 MB each (agent bench: peak RSS
 * ~170 → ~140 MB with no measurable cost per tool round; web_fetch of a 1 MB page the same within noise, 54-68 ms p50
 * either way).
 * `crow` adds `--optimize-for-size` a second after its start (packages/agent/src/process-setup.ts says why not at
 * once). crow-mcp does not: it halves the speed of its heavier tools (fuzzy edit, HTML conversion).
 */
import { setFlagsFromString } from "node:v8";

/** A V8 flag: its name and `"=value"` (or `""` for a boolean flag). */
export type V8Flag = readonly [name: string, value: string];

/** The flags both executables set. */
export const SHARED_V8_FLAGS: readonly V8Flag[] = [["semi-space-growth-factor", "=1"]];

/** Sets V8 flags, except those node was given (argv or NODE_OPTIONS, `--no-` form too): the user's choice wins. */
export function applyV8Flags(flags: readonly V8Flag[]): void {
  // Node's own options, read before crow-mcp's settings are (cli.ts runs this first): process plumbing.
  const given = `${process.execArgv.join(" ")} ${process.env.NODE_OPTIONS ?? ""}`;
  for (const [name, value] of flags) {
    if (!given.includes(name)) setFlagsFromString(`--${name}${value}`);
  }
}
