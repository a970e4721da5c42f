export * from "./mcp.js";
export * from "./paths.js";
export * from "./workspace.js";
