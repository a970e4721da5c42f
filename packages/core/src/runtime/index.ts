/** The SDK: `createCrow` and its sessions (see types.ts for the contracts). */
export { parseSlashCommand } from "./commands.js";
export { createCrow } from "./crow.js";
export { stderrLogger } from "./logger.js";
export * from "./options.js";
export { defaultSystemPrompt } from "./system-prompt.js";
export * from "./types.js";
export { InvalidDirectoryError } from "./workspace-roots.js";
