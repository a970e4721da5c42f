/**
 * @crow/util: the leaf helpers core, crow-mcp and the agent share, one definition each where every side had its own
 * copy. It imports nothing at all, not even Node's modules (scripts/check-layers.mjs), so any of them may use it
 * without taking anything on: crow-mcp's Node-free edit engine included.
 */
export { type Deadline, startDeadline } from "./deadline.js";
export { createLog, type Log, type LogOptions } from "./log.js";
export { errorText, escapeRegExp, splitLines } from "./text.js";
