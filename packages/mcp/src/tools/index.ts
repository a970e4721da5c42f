import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { ToolContext } from "../context.js";
import { registerEditTool } from "./edit.js";
import { TOOL_LIST, type ToolName } from "./list.js";
import { registerReadTool } from "./read.js";
import { registerTerminalTool } from "./terminal.js";
import { registerWebFetchTool } from "./web-fetch.js";
import { registerWebSearchTool } from "./web-search.js";
import { registerWriteTool } from "./write.js";

/** Each tool of the table (list.ts) and the function that registers it: one tool per file. */
const REGISTER: Record<ToolName, (server: McpServer, context: ToolContext) => void> = {
  read: registerReadTool,
  write: registerWriteTool,
  edit: registerEditTool,
  terminal: registerTerminalTool,
  web_search: registerWebSearchTool,
  web_fetch: registerWebFetchTool,
};

/** Registers every crow-mcp tool on `server`, in the table's order. */
export function registerTools(server: McpServer, context: ToolContext): void {
  for (const { name } of TOOL_LIST) REGISTER[name](server, context);
}
