/** The SDK: `createCrow` and its sessions (see types.ts for the contracts). */
export { parseSlashCommand } from "./commands.js";
export { createCrow, stderrLogger } from "./crow.js";
export * from "./options.js";
export { defaultSystemPrompt } from "./system-prompt.js";
export * from "./types.js";
