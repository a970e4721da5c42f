/**
 * @crow/agent: the ACP agent (`crow acp`) as a library: the agent app, its configuration, and the pure translation
 * from loop events to ACP updates.
 */
export * from "./acp/agent.js";
export * from "./acp/prompt-content.js";
export * from "./acp/run.js";
export * from "./acp/translate.js";
export * from "./config/index.js";
export { Session, type SessionOptions, type TurnOutcome } from "./session/session.js";
export { VERSION } from "./version.js";
