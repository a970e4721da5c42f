/**
 * @crow/agent: Crow as a library (docs/sdk.md). This entry is the public API, each name chosen: the SDK (`createCrow`:
 * the runtime configured like `crow acp`, with MCP tools and config.yaml's extensions; `toolRouterFactory`, the tool
 * set it gives each session, and the types of its options), the configuration it loads (`loadConfig`, `AgentConfig`,
 * `ConfigError`), and core's public types and errors that SDK users and extension authors meet (docs/sdk.md,
 * docs/extensions.md, examples/), so they need only this package. `packages/agent/test/public-api.test.ts` checks that
 * what the guides and examples import is here and that the agent's internals are not.
 *
 * Nothing else is promised: the ACP agent, its translation to ACP updates, the CLI and the configuration's helpers are
 * the `crow` executable's, imported by path inside this package. No other package needs them, so there is no internal
 * entry; one would sit beside this file, as core's `@crow/core/internal` does.
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
  LlmClient,
  LoadSessionOptions,
  Logger,
  MethodContext,
  MethodHandler,
  NewSessionOptions,
  PermissionMode,
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
  Store,
  SubagentResponse,
  ToolDisplay,
  ToolExecuteContext,
  ToolRegistration,
  ToolSet,
  ToolSetFactory,
  ToolSetRequest,
} from "@crow/core";
export {
  MAX_SUBAGENT_DEPTH,
  MethodError,
  PermissionRuleError,
  RunIterationError,
  SessionBusyError,
} from "@crow/core";
export { ConfigError } from "./config/errors.js";
export { type LoadOptions, loadConfig } from "./config/load.js";
export type { AgentConfig } from "./config/types.js";
export { type CrowOptions, createCrow, type ToolRouterFactoryOptions, toolRouterFactory } from "./sdk/create-crow.js";
export type { AcpMcpServer, ClientBridge } from "./tools/types.js";
