/**
 * crow-mcp's log: stdout belongs to the MCP protocol when serving stdio, so every line goes to stderr, as
 * `[crow-mcp] level: …`. Level from CROW_MCP_LOG (error | warn | info | debug; default warn).
 */
import { createLog } from "@crow/util";

export const log = createLog({ name: "crow-mcp", level: () => process.env.CROW_MCP_LOG });
