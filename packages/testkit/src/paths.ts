import { fileURLToPath } from "node:url";

/** Absolute path of the built `crow-mcp` entry point (run `npm run build` first). */
export const CROW_MCP_BIN = fileURLToPath(new URL("../../mcp/dist/cli.js", import.meta.url));

/** Absolute path of the built `crow` entry point (run `npm run build` first). */
export const CROW_BIN = fileURLToPath(new URL("../../agent/dist/cli.js", import.meta.url));

/** Root of the repository. */
export const REPO_ROOT = fileURLToPath(new URL("../../../", import.meta.url));
