/**
 * The loop's settings: what a configuration says about how prompt turns run. One object from the configuration to
 * the loop: the agent's `loadConfig` produces it (its `AgentConfig` is one), `createRuntime` takes it among its
 * options, each session hands it to the loop unchanged (`LoopConfig` extends it). A new setting is a field here, its
 * key in `LOOP_SETTING_KEYS`, its default here, and the line of the loop that reads it.
 */
import type { RequestParams } from "../llm/types.js";

export interface LoopSettings {
  /** LLM requests per prompt turn before stopping with `max_turn_requests` (default {@link DEFAULT_MAX_STEPS_PER_TURN}). */
  maxStepsPerTurn?: number;
  /** Sampling params of every request (a session's `reasoning_effort` is added to them). */
  params?: RequestParams;
  /**
   * How many of the most recent tool results every request carries whole; older long ones are sent shortened, in
   * batches (compaction/old-results.ts). `Infinity`: all whole. Default 10 (`DEFAULT_KEEP_TOOL_RESULTS`).
   */
  keepToolResults?: number;
}

/** Default `maxStepsPerTurn` (config.yaml's `max_steps_per_turn`). */
export const DEFAULT_MAX_STEPS_PER_TURN = 100;

/** Every key of {@link LoopSettings} (the compiler checks none is missing). */
const LOOP_SETTING_KEYS = Object.keys({
  maxStepsPerTurn: true,
  params: true,
  keepToolResults: true,
} satisfies Record<keyof LoopSettings, true>) as (keyof LoopSettings)[];

/** The loop settings among `from`'s fields (a runtime's options, an agent configuration), nothing else. */
export function loopSettings(from: LoopSettings): LoopSettings {
  const settings: Record<string, unknown> = {};
  for (const key of LOOP_SETTING_KEYS) if (from[key] !== undefined) settings[key] = from[key];
  return settings as LoopSettings;
}
