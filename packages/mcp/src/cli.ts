#!/usr/bin/env node
// The `crow-mcp` executable's entry. Node's compile cache covers only the modules compiled after it is enabled, and an
// ESM module's static imports are all compiled before its first line runs: so this entry imports nothing but the
// process plumbing, sets the V8 flags, turns the cache on, and only then loads zod (told not to compile its parsers
// before any schema exists) and the command line. In the bundle, main.js becomes a chunk of its own.
import { applyV8Flags, enableCompileCache, SHARED_V8_FLAGS, turnOffZodJit } from "./process/index.js";

applyV8Flags(SHARED_V8_FLAGS);
enableCompileCache();
await turnOffZodJit();
await import("./main.js");
