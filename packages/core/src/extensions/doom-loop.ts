import type { HookBus } from "../hooks/bus.js";

/** Options of `installDoomLoopGuard`. */
export interface DoomLoopOptions {
  /** Identical consecutive calls allowed before blocking: the `threshold`-th identical call is blocked (default 3). */
  threshold?: number;
}

/** Blocks the same tool with identical arguments `threshold` times in a row. Returns an uninstall function. */
export function installDoomLoopGuard(_bus: HookBus, _options: DoomLoopOptions = {}): () => void {
  throw new Error("not implemented yet");
}
