import type { HookBus } from "../hooks/bus.js";
import type { HookHandlers } from "../hooks/types.js";

type Gate = HookHandlers["before_tool_call"];

/** Options of `installDoomLoopGuard`. */
export interface DoomLoopOptions {
  /** The `threshold`-th identical call in a row is blocked (default 3). */
  threshold?: number;
  /**
   * Decides a repeated call instead of blocking it (the runtime asks the user in `ask` mode): gets the question to
   * put to the user and the block it would otherwise return, and resolves to the decision.
   */
  confirm?: (
    event: Parameters<Gate>[0],
    ctx: Parameters<Gate>[1],
    why: { question: string; reason: string },
  ) => Promise<{ block: true; reason: string } | undefined>;
}

/** JSON with sorted object keys, so `{a,b}` and `{b,a}` compare equal. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/**
 * The doom-loop guard as a `before_tool_call` gate: the same tool with identical arguments `threshold` times in
 * a row (across the steps of one prompt turn) is blocked with a result telling the model so (or decided by
 * `confirm`: each further repeat is put to it again). Any different call
 * resets the count, and so does the end of the turn. Register it before the permission gate so a looping model
 * does not keep prompting the user. Returns an uninstall function.
 */
export function installDoomLoopGuard(bus: HookBus, options: DoomLoopOptions = {}): () => void {
  const guard = doomLoopGuard(options);
  const offGate = bus.on("before_tool_call", guard.gate, { name: "doom-loop-guard" });
  const offReset = bus.on("turn_end", guard.reset, { name: "doom-loop-guard" });
  return () => {
    offGate();
    offReset();
  };
}

/** The guard's state and handlers for one session: `gate` on `before_tool_call`, `reset` on `turn_end`. */
export function doomLoopGuard(options: DoomLoopOptions = {}): {
  gate: Gate;
  reset: () => void;
} {
  const threshold = options.threshold ?? 3;
  let lastKey = "";
  let count = 0;
  return {
    gate: (event, ctx) => {
      const { call, definition } = event;
      const key = `${definition.function.name}\u0000${canonical(call.args)}`;
      count = key === lastKey ? count + 1 : 1;
      lastKey = key;
      if (count < threshold) return undefined;
      const reason =
        `Blocked: you called "${call.name}" with identical arguments ${count} times in a row, so it was not run ` +
        "again; the result would not change. Try a different approach, or ask the user for help.";
      if (!options.confirm) return { block: true, reason };
      const question = `the model called "${call.name}" with identical arguments ${count} times in a row`;
      return options.confirm(event, ctx, { question, reason });
    },
    reset: () => {
      lastKey = "";
      count = 0;
    },
  };
}
