/**
 * V8 settings for Crow's long-lived processes, which mostly wait on I/O. Importing this module applies what both
 * executables use: the young generation keeps its initial 1 MB semi-spaces instead of growing to 16 MB each (agent
 * bench: peak RSS ~170 → ~140 MB with no measurable cost per tool round; web_fetch of a 1 MB page the same within
 * noise, 54-68 ms p50 either way).
 * `crow` imports it as `@crow/mcp/v8-flags` (it lives here because this package may import nothing of Crow's) and
 * adds `--optimize-for-size`, which halves the speed of crow-mcp's heavier tools (fuzzy edit, HTML conversion) but
 * costs the agent's light work nothing measurable. Imported first by both CLIs; in a bundle it runs right after the
 * few shared chunks the entry imports, before the heavy modules load lazily.
 */
import { setFlagsFromString } from "node:v8";

const given = `${process.execArgv.join(" ")} ${process.env.NODE_OPTIONS ?? ""}`;

/** Sets V8 flags (`[name, "=value" or ""]`), except those node was given (argv or NODE_OPTIONS, `--no-` form too). */
export function applyV8Flags(flags: ReadonlyArray<readonly [name: string, value: string]>): void {
  for (const [name, value] of flags) {
    if (!given.includes(name)) setFlagsFromString(`--${name}${value}`);
  }
}

applyV8Flags([["semi-space-growth-factor", "=1"]]);
