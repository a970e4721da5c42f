/**
 * The runtime library: `createRuntime` and its sessions (their contracts: ../api/types.ts). "The SDK" is the agent's
 * `createCrow` (packages/agent/src/sdk/), this runtime configured like `crow acp`.
 */
export { parseSlashCommand } from "./commands.js";
export { createRuntime } from "./crow.js";
export { LEASE_TTL_MS, SessionLeaseError } from "./leases.js";
export { stderrLogger } from "./logger.js";
export * from "./options.js";
export { defaultSystemPrompt } from "./system-prompt.js";
export { checkAdditionalDirectories, InvalidDirectoryError } from "./workspace-roots.js";
