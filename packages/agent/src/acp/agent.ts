/**
 * The ACP agent: a thin layer from ACP requests to sessions and from loop events to `session/update`s. One app per
 * connection (the client's capabilities are per connection). Sessions are stored (sessions.ts: load, list, resume,
 * close, delete; session/persistence.ts: every message as soon as it is complete).
 */
import path from "node:path";
import {
  type AgentApp,
  type AgentContext,
  agent,
  type ClientCapabilities,
  type ContentBlock,
  type InitializeResponse,
  methods,
  PROTOCOL_VERSION,
  RequestError,
  type SessionConfigOption,
  type SessionModeState,
  type SessionUpdate,
  type StopReason,
} from "@agentclientprotocol/sdk";
import type { LlmClient, PermissionMode, Store } from "@crow/core";
import {
  type AgentConfig,
  CostMeter,
  contextWindowOf,
  createModelRouter,
  findModel,
  providerProblem,
} from "../config/index.js";
import { log } from "../log.js";
import { MODES, TurnBusyError } from "../session/modes.js";
import { SessionRecorder } from "../session/persistence.js";
import type { Session } from "../session/session.js";
import type { AcpMcpServer } from "../tools/types.js";
import { VERSION } from "../version.js";
import { clientBridge } from "./client-bridge.js";
import { COMMANDS, parseSlashCommand, runSlashCommand } from "./commands.js";
import { COMPACT_METHOD, compactionUpdates, registerCompactMethod } from "./compaction.js";
import { permissionAsker } from "./permission.js";
import { PromptContentError, promptContent, singleText } from "./prompt-content.js";
import { type OpenRequest, registerSessionMethods } from "./sessions.js";
import { commandsUpdate, messageChunk, modeUpdate } from "./translate.js";
import { TurnRelay } from "./turn-relay.js";
import { UpdateQueue } from "./update-queue.js";

/** What `initialize` answers (capabilities only for what is implemented). */
export function initializeResponse(): InitializeResponse {
  return {
    protocolVersion: PROTOCOL_VERSION,
    agentCapabilities: {
      loadSession: true,
      promptCapabilities: { image: true, audio: false, embeddedContext: true },
      mcpCapabilities: { http: true, sse: true },
      sessionCapabilities: { list: {}, resume: {}, close: {}, delete: {} },
      // Custom `_crow/*` methods will be advertised here.
      _meta: { crow: { version: VERSION, methods: [COMPACT_METHOD] } },
    },
    authMethods: [],
    agentInfo: { name: "crow", title: "Crow", version: VERSION },
  };
}

/** The model select (`category: "model"`), or none when no model is configured. */
export function configOptions(config: AgentConfig, current: string | undefined): SessionConfigOption[] {
  if (!current || config.models.length === 0) return [];
  return [
    {
      id: "model",
      name: "Model",
      category: "model",
      type: "select",
      currentValue: current,
      options: config.models.map((m) => ({
        value: m.name,
        name: m.name,
        description: `${m.id} (${m.provider})`,
      })),
    },
  ];
}

export function modeState(current: PermissionMode): SessionModeState {
  return {
    currentModeId: current,
    availableModes: MODES.map(({ id, name, description }) => ({ id, name, description })),
  };
}

/**
 * The runtime (loop, LLM client, MCP router) loads on first use, so `initialize` answers before those modules are
 * parsed; `initialize` starts loading them in the background for the first `session/new`.
 */
let runtime:
  | Promise<[typeof import("@crow/core"), typeof import("../session/session.js"), typeof import("../tools/index.js")]>
  | undefined;
function loadRuntime() {
  runtime ??= Promise.all([import("@crow/core"), import("../session/session.js"), import("../tools/index.js")]);
  return runtime;
}

/** Per-session ACP state next to the runtime session. */
interface Entry {
  session: Session;
  client: AgentContext;
  /** ACP tool call ids used so far (unique per session). */
  usedIds: Set<string>;
  /** The running turn's relay (for the permission request's tool call id). */
  relay?: TurnRelay;
  /** Last `session/update` sent: awaiting it flushes every earlier one (writes are ordered). */
  flushed: Promise<void>;
  /** Coalesces streamed text chunks per event-loop turn. */
  queue: UpdateQueue;
  /** Cumulative cost for usage_update (models with a configured price). */
  cost: CostMeter;
  /** Stores the session's messages and settings. */
  recorder: SessionRecorder;
}

export interface AgentOptions {
  config: AgentConfig;
  /** Overrides the LLM client (tests, SDK users). */
  llm?: LlmClient;
  /** Spawn the built-in crow-mcp (default true). */
  builtinTools?: boolean;
}

/** Builds the agent app. `close()` on the returned handle stops every session's tools. */
export function createAgent(options: AgentOptions): { app: AgentApp; close: () => Promise<void> } {
  const { config } = options;
  const sessions = new Map<string, Entry>();
  let capabilities: ClientCapabilities | undefined;
  let llm: LlmClient | undefined = options.llm;
  const llmClient = async (): Promise<LlmClient | undefined> => {
    if (llm || Object.keys(config.providers).length === 0) return llm;
    // One client per provider, made on first use: switching the model select switches base URL and key.
    const [{ createLlmClient }] = await loadRuntime();
    llm = createModelRouter(config, createLlmClient);
    return llm;
  };

  const send = (entry: Entry, update: SessionUpdate) => entry.queue.push(update);
  const deliver = (entry: Entry, update: SessionUpdate) => {
    const sent = entry.client.notify(methods.client.session.update, { sessionId: entry.session.id, update });
    entry.flushed = sent.catch((error: unknown) => log.debug("session/update not delivered", error));
  };
  // The store opens once, on first use (initialize starts it); a failed open is retried by the next request.
  let opened: Promise<Store> | undefined;
  const store = (): Promise<Store> => {
    opened ??= loadRuntime().then(([core]) => core.openStore(config.dbUri, { baseDir: config.home }));
    opened.catch(() => {
      opened = undefined;
    });
    return opened;
  };
  const find = (sessionId: string): Entry => {
    const entry = sessions.get(sessionId);
    if (!entry) throw RequestError.sessionNotFound(sessionId);
    return entry;
  };

  const storeOrError = async (): Promise<Store> => {
    try {
      return await store();
    } catch (error) {
      throw new RequestError(-32603, error instanceof Error ? error.message : String(error));
    }
  };

  const sessionState = (entry: Entry) => ({
    modes: modeState(entry.session.mode),
    configOptions: configOptions(config, entry.session.model),
  });

  /** Opens a live session for a stored one (new or loaded): tools, runtime session, recorder. */
  async function openEntry(client: AgentContext, request: OpenRequest): Promise<Entry> {
    const { record } = request;
    const id = record.id;
    let entry: Entry | undefined;
    const [, { Session }, { createToolRouter }] = await loadRuntime();
    const db = await storeOrError();
    const llm = await llmClient();
    const tools = await createToolRouter({
      cwd: request.cwd,
      mcpServers: request.mcpServers,
      configServers: config.mcpServers,
      client: clientBridge(client, id, capabilities),
      builtin: options.builtinTools ?? true,
    });
    const recorder = new SessionRecorder(db, id, {
      title: record.title,
      onTitle: (title, updatedAt) => entry && send(entry, { sessionUpdate: "session_info_update", title, updatedAt }),
      onError: (message) => entry && send(entry, messageChunk(`\n[${message}]\n`)),
    });
    const mode = MODES.find((m) => m.id === record.mode)?.id;
    const session = new Session({
      id,
      cwd: request.cwd,
      config,
      llm,
      tools,
      recorder,
      compaction: {
        store: db,
        onEvent: (event) => {
          for (const update of compactionUpdates(event, capabilities)) if (entry) send(entry, update);
        },
      },
      history: request.history,
      ...(mode ? { mode } : {}),
      ...(record.systemPrompt ? { system: record.systemPrompt } : {}),
      askPermission: permissionAsker({
        client,
        sessionId: id,
        toolCallId: (callId) => entry?.relay?.toolCallId(callId) ?? callId,
        onCancelled: () => entry?.session.cancel(),
        // Let the turn's queued events reach the relay (one macrotask), then send their updates first.
        beforeAsk: async () => {
          await new Promise((resolve) => setImmediate(resolve));
          entry?.queue.flush();
        },
      }),
    });
    // A stored model that is no longer configured falls back to the default.
    if (record.model && config.models.some((m) => m.name === record.model)) session.model = record.model;
    const created: Entry = {
      session,
      client,
      usedIds: request.usedIds,
      flushed: Promise.resolve(),
      queue: new UpdateQueue((update) => deliver(created, update)),
      cost: new CostMeter(),
      recorder,
    };
    entry = created;
    sessions.set(id, created);
    // After the response: the client must know the session id before updates for it arrive.
    setTimeout(() => {
      send(created, commandsUpdate(COMMANDS));
      if (record.title) send(created, { sessionUpdate: "session_info_update", title: record.title });
      for (const failure of tools.failures()) send(created, messageChunk(`${failure}\n`));
    }, 0);
    return created;
  }

  /** Stops a live session: its turn, its pending writes, its tools. */
  async function dispose(entry: Entry): Promise<void> {
    if (sessions.get(entry.session.id) === entry) sessions.delete(entry.session.id);
    entry.session.cancel();
    await entry.recorder.flush();
    await entry.session.close();
  }

  async function prompt(entry: Entry, blocks: ContentBlock[], signal: AbortSignal): Promise<StopReason> {
    const { session } = entry;
    const text = singleText(blocks);
    const command = text === undefined ? undefined : parseSlashCommand(text);
    if (command) {
      send(entry, messageChunk(await runSlashCommand(command, session)));
      entry.queue.flush();
      await entry.flushed;
      return "end_turn";
    }
    if (session.running) throw RequestError.invalidRequest(undefined, "a prompt is already running in this session");
    const problem = providerProblem(config, session.model);
    if (problem) throw new RequestError(-32603, problem);
    let content: Awaited<ReturnType<typeof promptContent>>;
    try {
      content = await promptContent(blocks, session.cwd, {
        ...(session.model ? { model: session.model } : {}),
        signal,
      });
    } catch (error) {
      if (error instanceof PromptContentError) throw RequestError.invalidParams(undefined, error.message);
      throw error;
    }
    const model = findModel(config, session.model);
    const relay = new TurnRelay(contextWindowOf(config, session.model), entry.usedIds, (usage) =>
      entry.cost.add(model, usage),
    );
    entry.relay = relay;
    // `$/cancel_request` on the prompt request is a cancel too.
    const onAbort = () => session.cancel();
    signal.addEventListener("abort", onAbort, { once: true });
    try {
      const outcome = await session.runTurn(content, (event) => {
        if (event.type === "hook_error") log.warn(`hook ${event.error.handler}: ${event.error.message}`);
        for (const update of relay.translate(event)) send(entry, update);
      });
      entry.queue.flush();
      await entry.flushed;
      if (outcome.reason !== "error") return outcome.reason;
      const error = outcome.error;
      throw new RequestError(-32603, `LLM provider error: ${error?.message ?? "unknown failure"}`, {
        kind: error?.kind,
        status: error?.status,
        code: error?.code,
        attempts: error?.attempts,
      });
    } catch (error) {
      if (error instanceof TurnBusyError) throw RequestError.invalidRequest(undefined, error.message);
      throw error;
    } finally {
      signal.removeEventListener("abort", onAbort);
      entry.relay = undefined;
    }
  }

  const app = agent({ name: "crow" })
    .onRequest(methods.agent.initialize, ({ params }) => {
      capabilities = params.clientCapabilities ?? undefined;
      loadRuntime().catch((error: unknown) => log.error("failed to load the agent runtime", error));
      store().catch((error: unknown) => log.error("failed to open the session store", error));
      return initializeResponse();
    })
    .onRequest(methods.agent.authenticate, () => ({}))
    .onRequest(methods.agent.session.new, async ({ params, client }) => {
      if (!path.isAbsolute(params.cwd))
        throw RequestError.invalidParams(undefined, `cwd must be absolute: ${params.cwd}`);
      const [, { newSessionPrompt }] = await Promise.all([loadRuntime(), import("../session/system-prompt.js")]);
      const db = await storeOrError();
      const record = await db.createSession({
        cwd: params.cwd,
        mode: config.mode,
        model: config.model ?? null,
        ...(await newSessionPrompt(params.cwd, { home: config.home, store: db })),
      });
      const entry = await openEntry(client, {
        record,
        cwd: params.cwd,
        mcpServers: params.mcpServers as AcpMcpServer[],
        history: [],
        usedIds: new Set(),
      });
      return { sessionId: entry.session.id, ...sessionState(entry) };
    })
    .onRequest(methods.agent.session.prompt, async ({ params, signal }) => ({
      stopReason: await prompt(find(params.sessionId), params.prompt, signal),
    }))
    .onNotification(methods.agent.session.cancel, ({ params }) => {
      sessions.get(params.sessionId)?.session.cancel();
    })
    .onRequest(methods.agent.session.setMode, ({ params }) => {
      const entry = find(params.sessionId);
      const mode = MODES.find((m) => m.id === params.modeId);
      if (!mode) throw RequestError.invalidParams(undefined, `unknown mode "${params.modeId}" (code, ask, read-only)`);
      entry.session.permissions.setMode(mode.id);
      entry.recorder.update({ mode: mode.id });
      send(entry, modeUpdate(mode.id));
      return {};
    })
    .onRequest(methods.agent.session.setConfigOption, ({ params }) => {
      const entry = find(params.sessionId);
      if (params.configId !== "model")
        throw RequestError.invalidParams(undefined, `unknown config option "${params.configId}"`);
      if (typeof params.value !== "string" || !config.models.some((m) => m.name === params.value)) {
        throw RequestError.invalidParams(
          undefined,
          `unknown model "${String(params.value)}" (${config.models.map((m) => m.name).join(", ")})`,
        );
      }
      entry.session.model = params.value;
      entry.recorder.update({ model: params.value });
      return { configOptions: configOptions(config, entry.session.model) };
    });
  registerCompactMethod(app, find);
  registerSessionMethods(app, {
    sessions,
    store: storeOrError,
    open: openEntry,
    dispose,
    sendNow: async (entry, updates) => {
      entry.queue.flush();
      for (const update of updates) deliver(entry, update);
      await entry.flushed;
    },
    state: sessionState,
  });

  const close = async () => {
    const all = [...sessions.values()];
    await Promise.allSettled(all.map((e) => dispose(e)));
    const db = opened;
    opened = undefined;
    await db?.then((s) => s.close()).catch(() => {});
  };
  return { app, close };
}
