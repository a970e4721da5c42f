/**
 * What the `crow` process sets up before its command runs, whichever way it started (the bundle's main.ts, or the
 * startup snapshot's main function in snapshot/entry.ts, which must not run it while the snapshot is built).
 */
import { applyV8Flags, SHARED_V8_FLAGS } from "@crow/mcp/v8-flags";

export function prepareProcess(): void {
  // stdout carries ACP only: anything printed through console goes to stderr.
  console.log = console.error;
  console.info = console.error;
  console.debug = console.error;
  // No --optimize-for-size (it was here until the startup snapshot): it makes V8 start incremental marking as soon
  // as the old generation passes its activation threshold, and a process started from the snapshot (a 15 MB old
  // generation that has never been collected) then marked through its first tool rounds: ~4 ms more CPU per round,
  // 3 of them on V8's worker threads, for no smaller peak RSS (77 MB either way after 10 rounds).
  // WebAssembly stays on its baseline compiler: the one module the agent runs is fetch's HTTP parser (undici's
  // llhttp; fetch serves resource links of prompts and the model list; LLM requests use node:http), whose optimizing
  // compile was a ~27 MB peak (`crow run`: 106 → 79 MB when LLM requests still went through fetch) for code that
  // parses a few kB.
  applyV8Flags([...SHARED_V8_FLAGS, ["liftoff-only", ""]]);
}
