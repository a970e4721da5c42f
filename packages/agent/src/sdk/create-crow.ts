/**
 * The SDK as users import it from `@crow/agent`: core's runtime (`createRuntime`) with Crow's configuration (`~/.crow/config.yaml`
 * + `.env`, or the environment), its providers and models, its store, the extensions listed in config.yaml, and the
 * MCP tool router (the built-in crow-mcp plus configured servers) as every session's default tool set.
 *
 *   const crow = await createCrow();
 *   const session = await crow.newSession({ cwd: process.cwd() });
 *   for await (const event of session.prompt("Fix the failing test")) …
 */
import { mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import {
  type Crow,
  createLlmClient,
  createRuntime,
  errorText,
  type Logger,
  type RuntimeOptions,
  type ToolSetFactory,
} from "@crow/core";
import { loopSettings, parseDbUri } from "@crow/core/internal";
import { pathNotice, pathVisibility, type SandboxPolicy } from "@crow/mcp/sandbox";
import { log } from "../base/log.js";
import { compactionThresholdOf } from "../config/compaction-threshold.js";
import { type AgentConfig, configFiles, createModelRouter, loadConfig } from "../config/index.js";
import { broadRootsNotice } from "../tools/broad-roots.js";
import { useConfigEnvironment } from "../tools/child-env.js";
import { createToolRouter } from "../tools/index.js";
import { checkSandbox, sandboxPolicy } from "../tools/sandbox.js";
import type { AcpMcpServer, ClientBridge } from "../tools/types.js";

/** Options of the agent's `createCrow`: core's options (each overrides what the config says) plus these. */
export interface CrowOptions extends Omit<RuntimeOptions, "config"> {
  /** The configuration (default: `loadConfig()` from `CROW_HOME` / `~/.crow` and the environment). */
  config?: AgentConfig;
  /** Spawn the built-in crow-mcp in each session (default true). */
  builtinTools?: boolean;
}

/** The agent's log as core's `Logger` (stderr, level from `CROW_LOG`). */
export const agentLogger: Logger = {
  debug: (message, ...details) => log.debug(message, details.length > 0 ? details : undefined),
  info: (message, ...details) => log.info(message, details.length > 0 ? details : undefined),
  warn: (message, ...details) => log.warn(message, details.length > 0 ? details : undefined),
  error: (message, ...details) => log.error(message, details.length > 0 ? details : undefined),
};

/** Options of {@link toolRouterFactory}. */
export interface ToolRouterFactoryOptions {
  /** Servers for this session besides the configured ones (what ACP's session/new passes). */
  mcpServers?: readonly AcpMcpServer[];
  /** The editor's fs and terminal (ACP clients that advertise them). */
  client?: (sessionId: string) => ClientBridge;
  /** Spawn the built-in crow-mcp (default true). */
  builtin?: boolean;
  /** Changes each policy the session's sandbox gets (`crow eval`: the workspace at /app, the suite hidden). */
  adjustSandbox?: (policy: SandboxPolicy) => SandboxPolicy;
}

/**
 * The agent's {@link ToolSetFactory}: one tool router per session over the built-in crow-mcp, the config's
 * `mcpServers` and `options.mcpServers`, and the editor's fs/terminal.
 */
export function toolRouterFactory(config: AgentConfig, options: ToolRouterFactoryOptions = {}): ToolSetFactory {
  return async ({ sessionId, cwd, additionalDirectories = [], mode, askPermission, askUser, completeUserQuestion }) => {
    const builtin = options.builtin ?? true;
    // sandbox: required and no usable bubblewrap: the session is refused here (session/new answers with the reason).
    // Otherwise a missing bubblewrap is one notice when the session opens (the editor's notice, a line in crow run).
    const notice = builtin ? await checkSandbox(config.sandbox) : undefined;
    const settings = {
      config: config.sandbox,
      // A workspace root's own `.crow` (its project extensions and skills) stays read-only in every root.
      protectedDirs: [
        config.home,
        ...config.skills.dirs,
        ...[cwd, ...additionalDirectories].map((d) => path.join(d, ".crow")),
      ],
      hidden: sandboxHidden(config),
    };
    // Writable roots that take in / or the home directory are accepted, but said once when the session opens.
    const broad =
      builtin && config.sandbox.enabled !== "off"
        ? broadRootsNotice([cwd, ...additionalDirectories, ...config.sandbox.writable])
        : undefined;
    const sandbox = () => {
      const policy = sandboxPolicy(settings, mode?.() ?? config.mode, [cwd, ...additionalDirectories], sessionId);
      return options.adjustSandbox ? options.adjustSandbox(policy) : policy;
    };
    // The user's PATH folders the sandboxed shell cannot see (its own /tmp, Crow's keys): said once, with why.
    const hiddenPath = builtin
      ? pathNotice(pathVisibility(sandbox(), process.env.PATH, { keep: [tmpdir()] }))
      : undefined;
    return createToolRouter({
      cwd,
      configServers: config.mcpServers,
      builtin,
      ...(config.languageServers ? { languageServers: config.languageServers } : {}),
      ...(config.deferTools === false ? { deferTools: false } : {}),
      ...(options.mcpServers ? { mcpServers: options.mcpServers } : {}),
      ...(options.client ? { client: options.client(sessionId) } : {}),
      sandbox,
      // In ask mode a command the sandbox blocked can run once outside it, if the user says so: never silently, and
      // never under `sandbox: required`, which allows no unconfined command at all.
      sandboxEscape: async (call, why, signal) => {
        if (config.sandbox.enabled === "required") return false;
        if ((mode?.() ?? config.mode) !== "ask" || !askPermission) return false;
        const answer = await askPermission({
          call,
          kind: "execute",
          definition: { type: "function", function: { name: call.name, description: "", parameters: {} } },
          signal,
          reason: `the sandbox blocking this command ${why}; allowing runs it once outside the sandbox, unconfined`,
          unconfined: true,
        });
        return answer === "allow_once" || answer === "allow_always";
      },
      ...(notice ? { sandboxNotice: notice } : {}),
      ...(broad ? { workspaceNotice: broad } : {}),
      ...(hiddenPath ? { pathNotice: hiddenPath } : {}),
      // The servers' questions go to the session's user (or are declined with the reason when nobody can answer).
      ...(askUser ? { user: { askUser, ...(completeUserQuestion ? { completeUserQuestion } : {}) } } : {}),
    });
  };
}

/**
 * Crow's SQLite store and the files SQLite keeps beside it (`-wal`, `-shm`, a rollback `-journal`): every project's
 * transcripts, with whatever a user pasted there. None for PostgreSQL, an in-memory store or a db_uri that does not
 * parse (opening the store says what is wrong with it).
 */
function storeFiles(config: AgentConfig): string[] {
  try {
    const target = parseDbUri(config.dbUri, config.home);
    if (target.kind !== "sqlite" || target.file === ":memory:") return [];
    return ["", "-wal", "-shm", "-journal"].map((suffix) => `${target.file}${suffix}`);
  } catch {
    return [];
  }
}

/**
 * What the sandboxed shell and the file tools never see: Crow's `.env` and config.yaml (provider keys), its store
 * (another project's transcript; bwrap hides the files that exist when a shell starts, the file tools refuse them by
 * path and inode at any time), and the checkpoints' shadow repositories (copies of the workspaces' files, readable
 * with `git --git-dir … show` otherwise). The checkpoints directory is made here, private, when missing: bwrap can
 * only hide what exists.
 */
function sandboxHidden(config: AgentConfig): string[] {
  const files = [...Object.values(configFiles(config.home)), ...storeFiles(config)];
  if (!config.checkpoints.enabled) return files;
  const checkpoints = path.join(config.home, "checkpoints");
  try {
    mkdirSync(checkpoints, { recursive: true, mode: 0o700 });
  } catch (error) {
    log.warn(`cannot create ${checkpoints}: ${errorText(error)}`);
  }
  return [...files, checkpoints];
}

/** Core's options for an agent configuration (what `crow acp` runs with). */
export function runtimeOptionsFor(config: AgentConfig, options: CrowOptions = {}): RuntimeOptions {
  const { config: _config, builtinTools, extensions, ...overrides } = options;
  const llm = Object.keys(config.providers).length > 0 ? createModelRouter(config, createLlmClient) : undefined;
  return {
    ...(llm ? { llm } : {}),
    ...(config.model ? { model: config.model } : {}),
    // No `id`: the model router maps a model name to its provider and id itself.
    models: config.models.map((m) => ({ name: m.name, contextWindow: m.contextWindow })),
    store: config.dbUri,
    home: config.home,
    tools: toolRouterFactory(config, { builtin: builtinTools ?? true }),
    // An AGENTS.md linked to Crow's .env, config.yaml (provider keys) or store (transcripts) is left out of every
    // session's prompt.
    systemPrompt: { home: config.home, hidden: [...Object.values(configFiles(config.home)), ...storeFiles(config)] },
    extensions: [...config.extensions.map((e) => ({ module: e.module, options: e.options })), ...(extensions ?? [])],
    mode: config.mode,
    permissions: config.permissions,
    ...loopSettings(config),
    compactionThreshold: (model) => compactionThresholdOf(config, model),
    checkpoints: {
      ...config.checkpoints,
      // No git the model's commands could have written is run (the workspace and additional directories are added
      // per session by core), and Crow's keys are never copied into a snapshot.
      untrustedDirs: config.sandbox.writable,
      secretFiles: Object.values(configFiles(config.home)),
    },
    // A shallow copy, as the object type extensions read (an interface has no index signature); taken after the
    // loaders' last change (adoptSingleModel runs before a runtime is created).
    config: { ...config },
    logger: agentLogger,
    extensionBaseDir: config.home,
    ...overrides,
  };
}

/**
 * Creates a Crow runtime configured like `crow acp`: providers, models, store, extensions and MCP servers from the
 * Crow configuration. Every option overrides the configuration's value.
 */
export async function createCrow(options: CrowOptions = {}): Promise<Crow> {
  const config = options.config ?? loadConfig();
  // What processes the sessions spawn may see (no keys, no .env but what crow-mcp reads), as under `crow acp`.
  useConfigEnvironment(config);
  return createRuntime(runtimeOptionsFor(config, options));
}
