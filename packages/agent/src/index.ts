/**
 * @crow/agent: Crow as a library. The SDK (`createCrow`: the runtime configured like `crow acp`, with MCP tools and
 * config.yaml's extensions), the ACP agent app (`createAgent`, `runAcp`), the configuration, and the pure translation
 * from runtime events to ACP updates. Core's public SDK and extension types are re-exported, so SDK users and
 * extension authors need only this package.
 */

export type {
  CommandContext,
  CommandInfo,
  CommandRegistration,
  Crow,
  CrowEvent,
  CrowSession,
  Extension,
  ExtensionAPI,
  ExtensionHookContext,
  ExtensionSpec,
  LoadSessionOptions,
  Logger,
  MethodContext,
  MethodHandler,
  NewSessionOptions,
  PermissionRules,
  PlanEntry,
  PromptOptions,
  PromptResult,
  PromptRun,
  ProviderContext,
  ProviderFactory,
  ResolvedTool,
  RuntimeOptions,
  SessionEvent,
  ToolDisplay,
  ToolExecuteContext,
  ToolRegistration,
  ToolSet,
  ToolSetFactory,
  ToolSetRequest,
} from "@crow/core";
export { MethodError, RunIterationError, SessionBusyError } from "@crow/core";
export * from "./acp/agent.js";
export * from "./acp/config-options.js";
export * from "./acp/prompt-content.js";
export * from "./acp/run.js";
export * from "./acp/translate.js";
export { VERSION } from "./base/version.js";
export * from "./config/index.js";
export {
  agentLogger,
  type CrowOptions,
  createCrow,
  runtimeOptionsFor,
  type ToolRouterFactoryOptions,
  toolRouterFactory,
} from "./sdk/create-crow.js";
export { createToolRouter } from "./tools/index.js";
export type { AcpMcpServer, ClientBridge, ToolRouter } from "./tools/types.js";
