import type { LoopConfig, LoopEvent, LoopInput } from "./types.js";

/** Default `maxStepsPerTurn`. */
export const DEFAULT_MAX_STEPS_PER_TURN = 100;

/**
 * Runs one prompt turn: LLM request, tool calls in parallel, repeat until the model stops calling tools,
 * `maxStepsPerTurn` requests were made, or `config.signal` aborts. Yields `LoopEvent`s; the last is `stop`.
 * Never throws. Breaking out of the iteration cancels the turn.
 */
export function runLoop(_input: LoopInput, _config: LoopConfig): AsyncIterable<LoopEvent> {
  throw new Error("not implemented yet");
}
