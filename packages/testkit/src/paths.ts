import { fileURLToPath } from "node:url";

/** Absolute path of the built `crow-mcp` executable, the bundle its package.json declares (run `npm run build` first). */
export const CROW_MCP_BIN = fileURLToPath(new URL("../../mcp/bundle/crow-mcp.js", import.meta.url));

/** Absolute path of the built `crow` executable, the bundle its package.json declares (run `npm run build` first). */
export const CROW_BIN = fileURLToPath(new URL("../../agent/bundle/crow.js", import.meta.url));

/** Root of the repository. */
export const REPO_ROOT = fileURLToPath(new URL("../../../", import.meta.url));

/**
 * The testkit's MCP server that asks its client questions during a tool call (elicit-mcp-server.ts), as built by
 * `npm run build`: run it with `node`.
 */
export const ELICIT_MCP_SERVER = fileURLToPath(new URL("../dist/elicit-mcp-server.js", import.meta.url));
/** The testkit's MCP server serving two skills (skills-mcp-server.ts): run it with `node`. */
export const SKILLS_MCP_SERVER = fileURLToPath(new URL("../dist/skills-mcp-server.js", import.meta.url));
