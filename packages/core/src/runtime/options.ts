/**
 * The options of `createRuntime` (the runtime library's entry; the handles it returns are in api/types.ts). Apart from
 * api/types.ts because they name the extension API (extensions to load, the logger), which itself names the handles.
 */

import type { PermissionAnswer, PermissionMode, PermissionRequest } from "../api/permissions.js";
import type { ModelInfo, ToolSetFactory } from "../api/types.js";
import type { UserAsker } from "../api/user-question.js";
import type { CheckpointSettings } from "../checkpoints/types.js";
import type { ExtensionSpec, Logger } from "../extensions/api.js";
import type { PermissionRules } from "../extensions/permission-rules.js";
import type { LlmClient } from "../llm/types.js";
import type { LoopSettings } from "../loop/settings.js";
import type { Store } from "../store/types.js";

type Awaitable<T> = T | Promise<T>;

/** The system prompt of new sessions. */
export type SystemPromptOption =
  /** A fixed text. */
  | string
  /** Rendered per session (the default: Crow's versioned template with tree and AGENTS.md, see `prepareSystemPrompt`). */
  | {
      home?: string;
      skillsHint?: string;
      /** Files never put into the prompt (Crow's `.env`, config.yaml): an AGENTS.md linked to one is left out. */
      hidden?: readonly string[];
    }
  /** Computed per session. */
  | ((cwd: string) => Awaitable<string>);

/**
 * Options of `createRuntime`. Everything is optional except a way to reach a model for prompting. The loop's
 * settings (`maxStepsPerTurn`, `params`: loop/settings.ts) are among them and reach every turn's loop unchanged.
 */
export interface RuntimeOptions extends LoopSettings {
  /** The LLM for every model not served by an extension provider (requests carry the model's `id`). */
  llm?: LlmClient;
  /** Model new sessions start with. */
  model?: string;
  /** Known models (the model select, extension providers, context windows). */
  models?: ModelInfo[];
  /** Where sessions are stored: a store, a `db_uri` (`sqlite:///…`, `postgresql://…`, `:memory:`), or false for none
   * (sessions then live in memory only and cannot be loaded). Default: in memory. */
  store?: Store | string | false;
  /** Base directory of relative SQLite paths (default: the Crow home). */
  home?: string;
  /** The default external tool set of new sessions (the agent's: its MCP router). Default: no tools besides extensions'. */
  tools?: ToolSetFactory;
  /** The system prompt (default: Crow's template rendered for the session cwd). */
  systemPrompt?: SystemPromptOption;
  /** Extensions, loaded in order after the built-in ones. */
  extensions?: ExtensionSpec[];
  /** Skip the built-in extensions by name (`persistence`, `compaction`, `permissions`, `doom-loop`, `commands`,
   * `ask-user`, `checkpoints`, `rewind`, `skills`, `subagents`, `todo`). */
  disableBuiltins?: string[];
  /** Permission mode of new sessions (default `code`). */
  mode?: PermissionMode;
  /**
   * Allow / ask / deny rules applied before the mode's default (config.yaml's `permissions`, syntax in
   * permission-rules.ts). An invalid rule makes `createRuntime` reject with PermissionRuleError.
   */
  permissions?: PermissionRules;
  /** Answers permission questions in `ask` mode (default: none, so `ask` rejects). Sessions may set their own. */
  askPermission?: (request: PermissionRequest) => Promise<PermissionAnswer>;
  /** Puts questions to the user (the `ask_user` tool, tool servers'); default none: they are declined. */
  askUser?: UserAsker;
  /** `MAX_COMPACT_TOKENS`: a number, or per model (default: 80 % of the model's context window, else 120 000). */
  compactionThreshold?: number | ((model: string | undefined) => number);
  /** What extensions see as `crow.config` (the agent passes its loaded `AgentConfig`). */
  config?: Record<string, unknown>;
  /** Where the runtime and extensions log (default: stderr). */
  logger?: Logger;
  /**
   * Workspace checkpoints before each turn's first change, for `session.rewind` (default: on, kept in
   * `<home>/checkpoints/`; needs a store). `false` or `{enabled: false}` turns them off.
   */
  checkpoints?: CheckpointSettings | false;
  /** Where a module extension path is resolved from (default: `home`, then the process cwd). */
  extensionBaseDir?: string;
}
