/**
 * The extension API (DESIGN.md §5): what an extension module receives. An extension is a module whose default export
 * is an {@link Extension}; it runs once per Crow instance, at startup, and registers hooks, in-process tools, slash
 * commands, custom ACP methods and LLM providers. The built-in features (persistence, compaction, permissions, the
 * doom-loop guard, the built-in slash commands and `_crow/compact`) are registered through this same API.
 *
 * Failure contract: an extension that throws while loading is reported (log + a notice to clients) and skipped; a
 * hook, tool, command or method handler that throws is isolated: hooks act as if they returned nothing, tools answer
 * an error tool result, commands answer with the error, methods answer a JSON-RPC error. No extension breaks a turn.
 */

import type * as zod from "zod";
import type { z } from "zod";
import type { CommandInfo, Crow, CrowSession, MethodContext } from "../api/types.js";
import type { HookContext, HookHandlers, HookPoint } from "../hooks/types.js";
import type { LlmClient } from "../llm/types.js";
import type { ToolDisplay, ToolKind, ToolProgress, ToolResult } from "../tools.js";

type Awaitable<T> = T | Promise<T>;

/** Where extensions (and the runtime) log. The agent writes to stderr; never to stdout (ACP lives there). */
export interface Logger {
  debug(message: string, ...details: unknown[]): void;
  info(message: string, ...details: unknown[]): void;
  warn(message: string, ...details: unknown[]): void;
  error(message: string, ...details: unknown[]): void;
}

/** The context of an extension's hook handler: the bus context plus the session the event belongs to. */
export interface ExtensionHookContext extends HookContext {
  session: CrowSession;
}

/** Hook handlers as extensions write them: the bus signatures, with the session in the context. */
export type ExtensionHookHandlers = {
  [P in HookPoint]: (event: Parameters<HookHandlers[P]>[0], ctx: ExtensionHookContext) => ReturnType<HookHandlers[P]>;
};

/** What an in-process tool's `execute` receives besides its (validated) arguments. */
export interface ToolExecuteContext {
  /** The session the call belongs to. */
  session: CrowSession;
  /** The runtime (e.g. to run a child session). */
  crow: Crow;
  /** The model's tool call id. */
  callId: string;
  /** Aborted when the turn is cancelled: stop work and return. */
  signal: AbortSignal;
  /** Streams progress into the tool call (shown by the client as the call's content). */
  onProgress(progress: ToolProgress): void;
}

/**
 * An in-process tool. `parameters` is a zod object schema: it is turned into the JSON Schema the model sees
 * (`z.toJSONSchema`) and validates the model's arguments before `execute` runs (invalid arguments become an error
 * tool result naming the problem). `execute` may return a string (the tool message text) or a full `ToolResult`;
 * a throw becomes an error tool result with its message.
 */
export interface ToolRegistration<S extends z.ZodType = z.ZodType> {
  name: string;
  /** Written for the model: what the tool does and when to use it. */
  description: string;
  parameters: S;
  /** ACP tool kind (default: derived from the name, like MCP tools). */
  kind?: ToolKind;
  /** Whether the tool only reads (permission modes let read-only tools of kind `other` run without asking). */
  readOnly?: boolean;
  /**
   * What a host shows of a call before it runs (title, locations), from the model's arguments as sent (not yet
   * validated). Default: {@link callDisplay} (the tool's name with its file, command, query or URL argument).
   */
  display?(args: Record<string, unknown>): ToolDisplay;
  /**
   * Whether the session gets the tool now (read before every LLM request; default always). A tool it leaves out is
   * neither offered to the model nor run when the model names it anyway.
   */
  available?(session: CrowSession): boolean;
  execute(args: z.infer<S>, ctx: ToolExecuteContext): Awaitable<string | ToolResult>;
}

/** What a slash command's `run` receives. */
export interface CommandContext {
  session: CrowSession;
  crow: Crow;
  /** Every command of the session (for `/help`). */
  commands: readonly CommandInfo[];
}

/**
 * A slash command (`/name args`, recognised when a prompt is a single text block starting with it). It is answered
 * with `run`'s text as an agent message and never sent to the model. Commands run outside of turns (`/stop` must
 * reach a running turn), so a command that needs the session idle should check `ctx.session.running`.
 */
export interface CommandRegistration {
  description: string;
  hint?: string;
  run(args: string, ctx: CommandContext): Awaitable<string | undefined>;
}

/**
 * A custom ACP method (`_crow/...` or the extension's own `_<name>/...`). `params` is the request's params as sent
 * (validate them; throw {@link MethodError} `invalidParams` when they are wrong). The resolved value is the JSON-RPC
 * result. Methods are advertised in `initialize` `_meta.crow.methods`.
 */
export type MethodHandler = (params: unknown, ctx: MethodContext) => Awaitable<unknown>;

/** An error a method handler throws to answer a specific JSON-RPC error (anything else is an internal error). */
export class MethodError extends Error {
  override name = "MethodError";
  constructor(
    /** JSON-RPC error code (-32602 invalid params, -32600 invalid request, -32002 not found, -32603 internal). */
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
  static invalidParams(message: string): MethodError {
    return new MethodError(-32602, message);
  }
  static invalidRequest(message: string): MethodError {
    return new MethodError(-32600, message);
  }
  static sessionNotFound(sessionId: string): MethodError {
    return new MethodError(-32002, `Resource not found: session ${sessionId}`, { uri: sessionId });
  }
}

/** What a provider factory receives: the model (its id at the provider) and the provider's options from config. */
export interface ProviderContext {
  /** The provider name as registered (a model's `provider:` in config.yaml names it). */
  name: string;
  options: Readonly<Record<string, unknown>>;
}

/** Makes the `LlmClient` of an extension provider (called once, on first use). */
export type ProviderFactory = (ctx: ProviderContext) => LlmClient;

/** What a prompt-args provider is told about the session being created. */
export interface PromptArgsContext {
  /** The new session's working directory. */
  cwd: string;
}

/**
 * Computes variables for the system prompt template of a new session (e.g. `skills_hint`). Values must be JSON:
 * they are stored with the session so its prompt can be reproduced.
 */
export type PromptArgsProvider = (ctx: PromptArgsContext) => Awaitable<Record<string, unknown> | undefined>;

/**
 * The object an extension's default export receives. Registrations made here apply to every session of the Crow
 * instance (hooks are installed on each session's bus, in the order extensions were loaded).
 */
export interface ExtensionAPI {
  /** The extension's name (its module path or package name, or the name given in code). */
  readonly name: string;
  /** The options of its config entry (`extensions: [{module, options}]`); `{}` when none. */
  readonly options: Readonly<Record<string, unknown>>;
  /** The host's configuration (for `crow acp`: the loaded config.yaml as `AgentConfig`). Read-only. */
  readonly config: Readonly<Record<string, unknown>>;
  /** A logger prefixed with the extension's name. */
  readonly log: Logger;
  /** Crow's zod (v4), for tool schemas: extensions need no zod dependency of their own. */
  readonly z: typeof zod.z;

  /**
   * Registers a hook handler on every session (DESIGN.md §5 semantics: observe, chained transform, gate). Returns a
   * function that unregisters it from sessions opened afterwards.
   */
  on<P extends HookPoint>(point: P, handler: ExtensionHookHandlers[P]): () => void;
  /**
   * Runs `setup` for each session when it opens (new or loaded), before its first turn; the function it may return
   * runs when the session closes. For per-session state.
   */
  onSession(setup: (session: CrowSession) => Awaitable<undefined | (() => Awaitable<void>)>): void;
  /** Adds an in-process tool to every session (next to the session's external tool set; the extension's name wins). */
  registerTool<S extends z.ZodType>(tool: ToolRegistration<S>): void;
  /** Adds a slash command (a later registration of the same name replaces the earlier one). */
  registerCommand(name: string, command: CommandRegistration): void;
  /** Adds a custom ACP method; the name must start with `_` (e.g. `_crow/x`, `_myext/y`). */
  registerMethod(name: string, handler: MethodHandler): void;
  /** Adds an LLM provider: models whose `provider` is `name` are served by the client `factory` makes. */
  registerProvider(name: string, factory: ProviderFactory): void;
  /**
   * Adds variables to the system prompt template of new sessions, computed per session before it opens (Crow's
   * template shows `skills_hint`; a user template in `<home>/prompts/` may use any other name). The built-in
   * variables (workspace, tree, AGENTS.md, date, platform) cannot be replaced; several extensions' `skills_hint`
   * lines are joined. A provider that throws is logged and skipped. Not called when the host gives a fixed prompt.
   */
  registerPromptArgs(provider: PromptArgsProvider): void;
  /**
   * Adds commands that depend on the session (its skills), advertised after the registered ones (a name already
   * registered wins). Called whenever the session's commands are listed; mark them `prompt: true`: hosts send
   * `/name args` to the model as a prompt, which the extension handles in its hooks.
   */
  registerSessionCommands(provider: (session: CrowSession) => CommandInfo[]): void;
}

/** An extension: the default export of an extension module. */
export type Extension = (api: ExtensionAPI) => Awaitable<void>;

/** An extension given to `createRuntime`: a function, or a module to import (path or package name) with options. */
export type ExtensionSpec =
  | Extension
  | { name?: string; extension: Extension; options?: Record<string, unknown> }
  | { module: string; options?: Record<string, unknown> };
