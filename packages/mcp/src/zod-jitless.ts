/**
 * Imported for its effect, first thing, by the entries of `crow` and `crow-mcp` (the bundles' main.ts and the
 * startup snapshots' entries): zod without its JIT. By default an object schema compiles a parser with `new Function`
 * on its first parse, and a process that parses each message kind only a few times (a `crow run`, the first tool
 * rounds of a fresh agent or toolserver) pays more for the compiles than they save (~15 ms of CPU before the first
 * LLM request; ~0.2 ms per tool call on either side in the first rounds).
 *
 * It must run before any schema is created, not merely before the first parse: zod decides per schema, when the
 * schema is constructed, whether it may compile. That is why this is a module of its own: a startup snapshot
 * evaluates every module while it is built, so a setting applied when the process starts would come after the ACP
 * and MCP SDKs' schemas already exist. Every package of a bundle shares this one zod.
 */
import { config } from "zod";

config({ jitless: true });
