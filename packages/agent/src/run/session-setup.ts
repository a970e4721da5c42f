/**
 * How `crow run` opens its session over ACP: initialize, then session/new or session/load (a unique beginning of a
 * stored id accepted), then `--mode`, `--model` and `--thought` through the session's selectors.
 */
import {
  type ClientContext,
  methods,
  PROTOCOL_VERSION,
  type SessionConfigOption,
  type SessionModeState,
} from "@agentclientprotocol/sdk";
import { errorText } from "@crow/core";
import { UsageError } from "../base/exit-codes.js";
import { VERSION } from "../base/version.js";
import type { AgentConfig } from "../config/index.js";
import { AgentExitedError, type AgentProcess } from "./agent-process.js";
import type { RunOptions } from "./args.js";
import { resolveStoredSession } from "./session-id.js";

function selectValues(option: SessionConfigOption): string[] {
  if (option.type !== "select") return [];
  return option.options.flatMap((o) => ("options" in o ? o.options.map((x) => x.value) : [o.value]));
}

export interface OpenedSession {
  sessionId: string;
  modes?: SessionModeState | null;
  configOptions?: SessionConfigOption[] | null;
}

/** JSON-RPC "resource not found" (ACP's answer to session/load of an unknown id). */
const NOT_FOUND = -32002;

/** `--add-dir` as ACP's `additionalDirectories` (none: the field is left out). */
function directories(options: RunOptions): { additionalDirectories?: string[] } {
  return options.addDirs.length > 0 ? { additionalDirectories: options.addDirs } : {};
}

/** initialize, then session/new or session/load (`beforeLoad` runs first so the replay is attributed). */
export async function openSession(
  agent: AgentProcess,
  options: RunOptions,
  /** This machine's configuration (its store resolves an id's beginning); undefined for a remote agent. */
  config: AgentConfig | undefined,
  beforeLoad: (sessionId: string) => void,
  /** Whether a person can answer questions at the keyboard (a TTY, without --yes): then they may be asked. */
  canAsk = false,
): Promise<OpenedSession> {
  const conn: ClientContext = agent.agent;
  const init = await agent.guard(
    conn.request(methods.agent.initialize, {
      protocolVersion: PROTOCOL_VERSION,
      // No fs/terminal: the agent uses its own tools (crow-mcp), which is what a terminal user wants.
      // Notices (retries, the runtime's warnings) are shown on stderr, apart from the answer.
      clientCapabilities: {
        fs: { readTextFile: false, writeTextFile: false },
        terminal: false,
        session: { notices: {} },
        // Questions (ask_user, MCP servers'): only when someone can answer them; otherwise the agent declines them.
        ...(canAsk ? { elicitation: { form: {}, url: {} } } : {}),
      },
      clientInfo: { name: "crow-run", title: "crow run", version: VERSION },
    }),
  );
  if (options.session === undefined) {
    const created = await agent.guard(
      conn.request(methods.agent.session.new, { cwd: options.cwd, mcpServers: [], ...directories(options) }),
    );
    return created;
  }
  if (!init.agentCapabilities?.loadSession) {
    throw new Error("this version of the agent cannot continue sessions (it does not support session/load)");
  }
  const load = async (sessionId: string): Promise<OpenedSession> => {
    beforeLoad(sessionId);
    const loaded = await agent.guard(
      conn.request(methods.agent.session.load, {
        sessionId,
        cwd: options.cwd,
        mcpServers: [],
        ...directories(options),
      }),
    );
    return { sessionId, ...loaded };
  };
  const typed = options.session;
  try {
    return await load(typed);
  } catch (error) {
    if (error instanceof AgentExitedError) throw error;
    if ((error as { code?: unknown }).code !== NOT_FOUND) {
      throw new Error(`cannot continue session "${typed}": ${errorText(error)}`);
    }
  }
  // Not a whole id: the one stored session it begins, if there is one (several: the candidates, exit 2).
  const full = config ? await resolveStoredSession(config, typed) : undefined;
  if (full === undefined || full === typed) {
    throw new UsageError(`no stored session "${typed}" (see the ids with: crow sessions list)`);
  }
  try {
    return await load(full);
  } catch (error) {
    if (error instanceof AgentExitedError) throw error;
    throw new Error(`cannot continue session "${full}": ${errorText(error)}`);
  }
}

/** `--mode` through session/set_mode and `--model` through the model select (session/set_config_option). */
export async function configure(
  agent: AgentProcess,
  sessionId: string,
  options: RunOptions,
  modes: SessionModeState | null | undefined,
  configOptions: SessionConfigOption[] | null | undefined,
): Promise<void> {
  if (options.mode) {
    const ids = (modes?.availableModes ?? []).map((m) => m.id);
    if (ids.length > 0 && !ids.includes(options.mode)) {
      throw new UsageError(`unknown mode "${options.mode}" (available: ${ids.join(", ")})`);
    }
    await agent.guard(agent.agent.request(methods.agent.session.setMode, { sessionId, modeId: options.mode }));
  }
  let current = configOptions;
  if (options.model) {
    const select = configOptions?.find((o) => o.category === "model");
    if (!select) throw new UsageError(`--model ${options.model}: the agent offers no model selection`);
    const values = selectValues(select);
    if (values.length > 0 && !values.includes(options.model)) {
      throw new UsageError(`unknown model "${options.model}" (available: ${values.join(", ")})`);
    }
    const changed = await agent.guard(
      agent.agent.request(methods.agent.session.setConfigOption, {
        sessionId,
        configId: select.id,
        value: options.model,
      }),
    );
    current = changed.configOptions;
  }
  if (options.thought) {
    // After --model: the levels are the (new) model's.
    const select = current?.find((o) => o.category === "thought_level");
    if (!select) {
      throw new UsageError(
        `--thought ${options.thought}: the model has no thought levels (configure reasoning_effort for it in config.yaml)`,
      );
    }
    const values = selectValues(select);
    if (!values.includes(options.thought)) {
      throw new UsageError(`unknown thought level "${options.thought}" (available: ${values.join(", ")})`);
    }
    await agent.guard(
      agent.agent.request(methods.agent.session.setConfigOption, {
        sessionId,
        configId: select.id,
        value: options.thought,
      }),
    );
  }
}
