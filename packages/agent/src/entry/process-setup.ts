/** What the `crow` process sets up before its command runs (called by the bundle's main.ts). */
import { applyV8Flags, SHARED_V8_FLAGS } from "@crow/mcp/process";

export function prepareProcess(): void {
  // stdout carries ACP only: anything printed through console goes to stderr.
  console.log = console.error;
  console.info = console.error;
  console.debug = console.error;
  // WebAssembly stays on its baseline compiler: the one module the agent runs is fetch's HTTP parser (undici's
  // llhttp; fetch serves resource links of prompts and the model list; LLM requests use node:http), whose optimizing
  // compile was a ~27 MB peak (`crow run`: 106 → 79 MB when LLM requests still went through fetch) for code that
  // parses a few kB.
  applyV8Flags([...SHARED_V8_FLAGS, ["liftoff-only", ""]]);
  // --optimize-for-size (V8 keeps the heap small: a busy agent peaks ~15 MB lower), but a second after the start, not
  // at once. Set at once, it made a process (measured when crow still started from a V8 startup snapshot, with a
  // 15 MB old generation never collected) mark incrementally through the tool rounds that followed: ~3-4 ms more CPU
  // per round for the first ~10 rounds, most on V8's worker threads, which in a `crow run` are the rounds right after
  // the start. A second later, the same one-off marking comes with the first allocations after it (an agent idle in
  // an editor still pays it on the first rounds of its first prompt). Much later is no good either: set after a burst of work began (5 s), the heap had
  // already grown (that peak +12-17 MB).
  setTimeout(() => applyV8Flags([["optimize-for-size", ""]]), FRUGAL_AFTER_MS).unref();
}

/** How long after its start the process begins to favour memory over speed (see prepareProcess). */
const FRUGAL_AFTER_MS = 1_000;
