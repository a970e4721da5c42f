import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { ToolContext } from "../context.js";

/** Registers `edit(file_path, old_string, new_string, replace_all=false)`. (Being built; see the edit engine.) */
export function registerEditTool(_server: McpServer, _context: ToolContext): void {}
