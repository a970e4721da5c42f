#!/usr/bin/env node
// The `crow` executable's entry. Node's compile cache covers only the modules compiled after it is enabled, and an
// ESM module's static imports are all compiled before its first line runs: so this entry imports nothing but the
// process plumbing, turns the cache on, and only then loads the rest: the small toolserver starter first, then zod
// (told not to compile its parsers before the command line creates any schema), then the command line. In the
// bundle, main.js becomes a chunk of its own.
import { enableCompileCache, turnOffZodJit } from "@crow/mcp/process";

enableCompileCache();
// `crow acp` and `crow run` spawn their toolserver first, so it boots while the rest of crow loads.
(await import("./early-toolserver.js")).startToolserverEarly(process.argv.slice(2));
await turnOffZodJit();
await import("./main.js");
