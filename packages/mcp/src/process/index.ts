/**
 * Process plumbing of both executables, `crow` and `crow-mcp`: what their entries (cli.ts) set up before loading the
 * rest (Node's compile cache, V8 flags, zod without its JIT), and the MCP SDK's lazily loaded JSON Schema validator.
 * `crow` imports it as `@crow/mcp/process` (it lives here because this package may import nothing of Crow's). None of
 * it constrains how any other module is written.
 */
export { compileCacheDir, enableCompileCache } from "./compile-cache.js";
export { AjvJsonSchemaValidator, LazyJsonSchemaValidator } from "./json-schema-validator.js";
export { applyV8Flags, SHARED_V8_FLAGS, type V8Flag } from "./v8-flags.js";
export { turnOffZodJit } from "./zod-jitless.js";
