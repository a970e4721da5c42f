import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { ToolContext } from "../context.js";
import { registerEditTool } from "./edit.js";
import { registerReadTool } from "./read.js";
import { registerTerminalTool } from "./terminal.js";
import { registerWebFetchTool } from "./web-fetch.js";
import { registerWebSearchTool } from "./web-search.js";
import { registerWriteTool } from "./write.js";

/** Registers every crow-mcp tool on `server`. One tool per file; each file exports its own register function. */
export function registerTools(server: McpServer, context: ToolContext): void {
  registerReadTool(server, context);
  registerWriteTool(server, context);
  registerEditTool(server, context);
  registerTerminalTool(server, context);
  registerWebSearchTool(server, context);
  registerWebFetchTool(server, context);
}
