export type { CrowMcpServer, ServerOptions, ToolContext } from "./server.js";
export { createServer } from "./server.js";
export { VERSION } from "./version.js";
