/**
 * The ACP agent: a translator over a Crow runtime. ACP requests become runtime calls (new/load session, prompt,
 * cancel, modes, model, commands, custom methods) and the runtime's events become `session/update`s. The runtime
 * owns sessions, persistence, compaction, permissions and extensions; this layer owns what is per connection: the
 * client's capabilities, the editor bridge (fs/terminal), permission questions, update batching and tool call ids.
 */
import path from "node:path";
import {
  type AgentApp,
  type AgentContext,
  type agent,
  type ClientCapabilities,
  methods,
  RequestError,
  type SessionUpdate,
} from "@agentclientprotocol/sdk";
import {
  type ClientCapabilities as UnstableCapabilities,
  agent as unstableAgent,
} from "@agentclientprotocol/sdk/unstable";
import type { Crow, CrowSession, LlmClient, LlmError } from "@crow/core";
import { errorText } from "@crow/core";
import { log } from "../base/log.js";
import { type AgentConfig, CostMeter, contextWindowOf, findModel } from "../config/index.js";
import { shortReason } from "../config/provider-errors.js";
import type { AcpMcpServer } from "../tools/types.js";
import { requestedDirectories, withDirectoryErrors } from "./additional-directories.js";
import { registerAuthMethods, SignIn, type SignInOptions, signInCheck } from "./auth.js";
import { clientBridge } from "./client-bridge.js";
import { configOptions, configOptionsUpdate, findMode, modeState, setConfigOption } from "./config-options.js";
import { elicitationAsker } from "./elicitation.js";
import { EventRelay } from "./event-relay.js";
import { BUILTIN_METHODS, initializeResponse } from "./initialize.js";
import { Outbox } from "./outbox.js";
import { permissionAsker } from "./permission.js";
import { runPrompt } from "./prompt-turn.js";
import { type OpenSession, registerSessionMethods } from "./sessions.js";
import { SubagentSessions } from "./subagent-sessions.js";
import { commandsUpdate, messageChunk } from "./translate.js";
import { TurnGate } from "./turn-gate.js";

/**
 * The app builder with the unstable schema's parsers: the same builder as the stable one, but `initialize` keeps
 * `clientCapabilities.subagents` (the stable parser drops it). Typed as the stable app: the layer speaks the stable
 * schema, and sends the unstable subagent kinds only to clients that declared them (subagent-sessions.ts).
 */
const acpAgent = unstableAgent as unknown as typeof agent;

/** A retried request as a notice (`retrying 2/4: connection refused`), for clients that advertise notices. */
function retryNotice(maxRetries: number) {
  return (attempt: number, error: LlmError): SessionUpdate[] => [
    {
      sessionUpdate: "notice",
      severity: "warning",
      title: "Crow",
      description: `retrying ${attempt}/${maxRetries}: ${shortReason(error)}`,
    },
  ];
}

/**
 * Resolves once the response of the request being handled is queued for writing (it follows from the handler's
 * promise, within this macrotask). A session's outbox opens then: the client must know a session's id before
 * updates about it arrive, or a client that prompts at once could have its answer before the session's commands.
 */
function afterResponse(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Per-session ACP state next to the runtime session. */
export interface Entry {
  session: CrowSession;
  client: AgentContext;
  /** ACP tool call ids used so far (unique per session). */
  usedIds: Set<string>;
  /** The session's events as updates (and the tool call ids a permission request refers to). */
  relay: EventRelay;
  /** The only writer of the session's updates and permission requests, in the order of its events. */
  outbox: Outbox;
  /** Cumulative cost for usage_update (models with a configured price). */
  cost: CostMeter;
  /** The prompt turns (one at a time; a prompt after a cancel waits for the cancelled turn). */
  turns: TurnGate;
  /** Stops listening to the session's events. */
  unsubscribe: () => void;
  /** Its `task` children as ACP child sessions (clients that declared `subagents`). */
  subagents?: SubagentSessions;
}

export interface AgentOptions {
  config: AgentConfig;
  /** Overrides the LLM client (tests, SDK users). */
  llm?: LlmClient;
  /** Spawn the built-in crow-mcp (default true). */
  builtinTools?: boolean;
  /** Offer signing in (`crow acp`): Terminal Auth running `crow init`, auth-required sessions, logout (auth.ts). */
  signIn?: SignInOptions;
  /** A runtime shared by several agents (`crow acp --listen`: one agent per connection); `close()` leaves it open. */
  runtime?: () => Promise<Crow>;
}

/** Builds the agent app. `close()` on the returned handle closes the runtime (every session, the store). */
export function createAgent(options: AgentOptions): { app: AgentApp; close: () => Promise<void> } {
  // Replaced when signing in (or out) reads the configuration again (see adopt).
  let config = options.config;
  const sessions = new Map<string, Entry>();
  let capabilities: ClientCapabilities | undefined;
  const signIn = options.signIn ? new SignIn(options.signIn) : undefined;

  // The runtime loads on first use (initialize answers before the loop, the LLM client and MCP are parsed, unless
  // extensions must be loaded to advertise their methods). A failed start is retried by the next request.
  let starting: Promise<Crow> | undefined;
  const ownRuntime = (): Promise<Crow> => {
    starting ??= import("../sdk/create-crow.js").then(({ createCrow }) =>
      createCrow({
        config,
        ...(options.llm ? { llm: options.llm } : {}),
        ...(options.builtinTools !== undefined ? { builtinTools: options.builtinTools } : {}),
      }),
    );
    starting.catch(() => {
      starting = undefined;
    });
    return starting;
  };
  const runtime = options.runtime ?? ownRuntime;
  const crowOrError = async (): Promise<Crow> => {
    try {
      return await runtime();
    } catch (error) {
      // A store that cannot be opened where it is configured, or without a SQLite driver, is a setup problem (exit 2).
      const setup =
        error instanceof Error && /^Store(Location|Driver)Error$/.test(error.name) ? { setup: "store" } : undefined;
      throw new RequestError(-32603, errorText(error), setup);
    }
  };

  const send = (entry: Entry, update: SessionUpdate) => entry.outbox.send(update);
  /** Whether the client takes boolean config options (else on/off settings are offered as On/Off selects). */
  const booleanOptions = () => Boolean(capabilities?.session?.configOptions?.boolean);
  /** Whether the client declared `subagents` (unstable ACP): a task's child is then a child session. */
  const subagentsOn = () => Boolean((capabilities as UnstableCapabilities | undefined)?.subagents);
  /** A session's relay of events to updates (`cost`: its price meter, for the top session's usage). */
  const relayOf = (session: CrowSession, usedIds: Set<string>, cost?: CostMeter) =>
    new EventRelay(
      () => contextWindowOf(config, session.model),
      usedIds,
      () => capabilities,
      cost ? (usage) => cost.add(findModel(config, session.model), usage) : undefined,
      capabilities?.session?.notices ? retryNotice(config.retry.maxRetries ?? 4) : undefined,
    );
  const find = (sessionId: string): Entry => {
    const entry = sessions.get(sessionId);
    if (!entry) throw RequestError.sessionNotFound(sessionId);
    return entry;
  };
  const sessionState = (entry: Entry) => ({
    modes: modeState(entry.session.mode),
    configOptions: configOptions(config, entry.session, booleanOptions()),
  });

  /**
   * Makes `next` the configuration: the open sessions are closed (they are stored; nothing keeps using what was
   * replaced, a removed key say) and the runtime starts again with it on the next request.
   */
  async function adopt(next: AgentConfig): Promise<void> {
    if (next === config) return;
    await Promise.allSettled([...sessions.values()].map((e) => dispose(e)));
    config = next;
    const previous = starting;
    starting = undefined;
    await previous?.then((c) => c.close()).catch(() => {});
  }

  // With sign-in offered: the auth-required error until a usable model is configured (auth.ts), one check at a time.
  const signedIn = signInCheck(signIn, {
    config: () => config,
    // The configuration is read again only while no session of this connection holds the runtime.
    canReload: () => sessions.size === 0,
    capabilities: () => capabilities,
    adopt,
  });

  /** Opens a runtime session for this connection (its tools see the editor) and starts relaying its events. */
  async function open(client: AgentContext, request: OpenSession): Promise<Entry> {
    await signedIn();
    const crow = await crowOrError();
    let entry: Entry | undefined;
    const { toolRouterFactory } = await import("../sdk/create-crow.js");
    const perSession = {
      tools: toolRouterFactory(config, {
        mcpServers: request.mcpServers,
        client: (sessionId) => clientBridge(client, sessionId, capabilities),
        builtin: options.builtinTools ?? true,
      }),
      askPermission: permissionAsker({
        outbox: () => entry?.outbox,
        announced: (callId) => entry?.relay.announced(callId),
        onCancelled: () => entry?.session.cancel(),
      }),
      // Questions to the user (ask_user, MCP elicitations): only when the client can show them.
      askUser: elicitationAsker(capabilities, {
        outbox: () => entry?.outbox,
        toolCallId: (callId) => entry?.relay.announced(callId)?.toolCallId,
      }),
    };
    const { cwd, additionalDirectories } = request;
    const session = await withDirectoryErrors(() =>
      request.kind === "new"
        ? crow.newSession({ cwd, additionalDirectories, ...perSession })
        : crow.loadSession(request.sessionId, { cwd, additionalDirectories, ...perSession }),
    );
    const usedIds = new Set<string>();
    const cost = new CostMeter();
    const created: Entry = {
      session,
      client,
      usedIds,
      relay: relayOf(session, usedIds, cost),
      outbox: new Outbox(client, session.id, afterResponse()),
      cost,
      turns: new TurnGate(),
      // The session's one stream: every event (a turn's and the session's own) becomes updates, in order.
      unsubscribe: session.subscribe((event) => {
        const updates = created.subagents?.updates(event) ?? created.relay.translate(event);
        for (const update of updates) created.outbox.send(update);
        // Whoever changed it (the client, a command, an extension): the config options show the new state.
        if (event.type === "mode" || event.type === "model" || event.type === "reasoning_effort")
          send(created, configOptionsUpdate(config, session, booleanOptions()));
      }),
    };
    if (subagentsOn()) {
      created.subagents = new SubagentSessions(session.id, created.relay, {
        session: (id) => crow.session(id),
        send: (update, sessionId) => created.outbox.send(update, sessionId),
        relay: (child) => relayOf(child, new Set()),
      });
    }
    entry = created;
    sessions.set(session.id, created);
    return created;
  }

  /** What the client learns about a session it opened: its commands, its title, the problems of its opening. */
  function announce(entry: Entry): void {
    const { session } = entry;
    send(entry, commandsUpdate(session.commands()));
    if (session.title) send(entry, { sessionUpdate: "session_info_update", title: session.title });
    // Problems (an MCP server that did not start, an extension that failed): a notice where the client shows them.
    for (const problem of session.problems()) {
      send(
        entry,
        capabilities?.session?.notices
          ? { sessionUpdate: "notice", severity: "warning", title: "Crow", description: problem }
          : messageChunk(`${problem}\n`),
      );
    }
  }

  /** Stops a live session: its turn, its pending writes, its tools. */
  async function dispose(entry: Entry): Promise<void> {
    if (sessions.get(entry.session.id) === entry) sessions.delete(entry.session.id);
    entry.unsubscribe();
    entry.subagents?.close();
    await entry.session.close();
  }

  const app = acpAgent({ name: "crow" })
    .onRequest(methods.agent.initialize, async ({ params }) => {
      capabilities = params.clientCapabilities ?? undefined;
      signIn?.warm(config);
      const auth = signIn ? { methods: signIn.methods(capabilities) } : undefined;
      if (config.extensions.length === 0) {
        runtime().catch((error: unknown) => log.error("failed to start the agent runtime", error));
        return initializeResponse(BUILTIN_METHODS, auth);
      }
      // Extensions may add methods: advertise them all (a runtime that fails to start is retried by session/new).
      const crow = await runtime().catch((error: unknown) => {
        log.error("failed to start the agent runtime", error);
        return undefined;
      });
      return initializeResponse(crow?.methods() ?? BUILTIN_METHODS, auth);
    })
    .onRequest(methods.agent.session.new, async ({ params, client }) => {
      if (!path.isAbsolute(params.cwd))
        throw RequestError.invalidParams(undefined, `cwd must be absolute: ${params.cwd}`);
      const entry = await open(client, {
        kind: "new",
        cwd: params.cwd,
        mcpServers: params.mcpServers as AcpMcpServer[],
        additionalDirectories: requestedDirectories(params.additionalDirectories, "session/new"),
      });
      announce(entry);
      return { sessionId: entry.session.id, ...sessionState(entry) };
    })
    .onRequest(methods.agent.session.prompt, async ({ params, signal }) => ({
      stopReason: await runPrompt(find(params.sessionId), params.prompt, signal, {
        crow: crowOrError,
        config: () => config,
      }),
    }))
    .onNotification(methods.agent.session.cancel, ({ params }) => {
      const entry = sessions.get(params.sessionId);
      entry?.turns.cancel();
      entry?.session.cancel();
    })
    .onRequest(methods.agent.session.setMode, ({ params }) => {
      const entry = find(params.sessionId);
      const mode = findMode(params.modeId);
      if (!mode) throw RequestError.invalidParams(undefined, `unknown mode "${params.modeId}" (code, ask, read-only)`);
      // The session tells its listeners (current_mode_update, config_option_update) and persistence stores it.
      entry.session.setMode(mode);
      return {};
    })
    .onRequest(methods.agent.session.setConfigOption, ({ params }) => {
      const entry = find(params.sessionId);
      setConfigOption(config, entry.session, params.configId, params.value);
      return { configOptions: configOptions(config, entry.session, booleanOptions()) };
    })
    // Custom methods (`_crow/compact`, extensions'): the runtime's registry answers them.
    .onRequest("*", async ({ method, params, signal }) => {
      if (!method.startsWith("_")) throw RequestError.methodNotFound(method);
      const crow = await crowOrError();
      if (!crow.methods().includes(method)) throw RequestError.methodNotFound(method);
      try {
        return await crow.callMethod(method, params, { signal });
      } catch (error) {
        const code = (error as { code?: unknown }).code;
        const message = errorText(error);
        throw new RequestError(typeof code === "number" ? code : -32603, message, (error as { data?: unknown }).data);
      }
    });
  registerAuthMethods(app, { signIn, config: () => config, signedIn, adopt });
  registerSessionMethods(app, {
    sessions,
    crow: crowOrError,
    ready: signedIn,
    open,
    dispose,
    replay: (entry, updates) => entry.outbox.sendEach(updates),
    subagents: subagentsOn,
    announce,
    written: (entry) => entry.outbox.written(),
    state: sessionState,
  });

  const close = async () => {
    const all = [...sessions.values()];
    await Promise.allSettled(all.map((e) => dispose(e)));
    const crow = starting;
    starting = undefined;
    await crow?.then((c) => c.close()).catch(() => {});
  };
  return { app, close };
}
