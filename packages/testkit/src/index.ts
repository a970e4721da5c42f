export * from "./acp-client.js";
export * from "./mcp.js";
export * from "./mock-llm.js";
export * from "./paths.js";
export * from "./postgres.js";
export * from "./provider-streams.js";
export * from "./workspace.js";
