/**
 * The tool router: MCP clients for the built-in crow-mcp and the configured/ACP-provided servers, plus the editor's
 * fs and terminal when the ACP client offers them, behind core's `ToolSet`.
 */
export { type ToolProfile, toolProfile } from "./builtin/index.js";
export { createToolRouter } from "./router.js";
export { BUILTIN_SERVER, builtinServerPath } from "./servers.js";
export type * from "./types.js";
