#!/usr/bin/env node
// The `crow-mcp` executable's entry. Node's compile cache covers only the modules compiled after it is enabled, and an
// ESM module's static imports are all compiled before its first line runs: so this entry imports nothing but the
// cache switch (and the V8 flags), turns it on, and only then loads the command line. In the bundle, main.js becomes
// a chunk of its own.
import { enableCompileCache } from "./compile-cache.js";
import { applyV8Flags, SHARED_V8_FLAGS } from "./v8-flags.js";

applyV8Flags(SHARED_V8_FLAGS);
enableCompileCache();
await import("./main.js");
