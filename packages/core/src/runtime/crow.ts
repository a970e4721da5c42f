/**
 * `createRuntime(options)`: the runtime as a library. It loads the built-in extensions and the given ones, opens the
 * store, and makes sessions (new or loaded) whose tools are the extensions' in-process tools plus the session's tool
 * source. `crow acp` is one host of this runtime (a translator over it); the agent's SDK (`createCrow`) and library
 * users are others.
 */

import {
  type Crow,
  type CrowSession,
  type LoadSessionOptions,
  type MethodContext,
  type NewSessionOptions,
  SessionBusyError,
} from "../api/types.js";
import { SessionCompactions, thresholdFor } from "../compaction/index.js";
import { errorText } from "../error-text.js";
import { MethodError } from "../extensions/api.js";
import { permissionGates } from "../extensions/builtin.js";
import { loadExtensions } from "../extensions/load.js";
import { ExtensionRegistry } from "../extensions/registry.js";
import { crowHome } from "../home.js";
import { loopSettings } from "../loop/settings.js";
import { sessionSlug } from "../store/ids.js";
import { openStore } from "../store/open.js";
import { SessionNotFoundError, type SessionRecord, type Store } from "../store/types.js";
import type { ToolSet } from "../tools.js";
import { builtinExtensions } from "./builtins.js";
import { type Checkpointing, setupCheckpoints } from "./checkpointing.js";
import { RuntimeLeases } from "./leases.js";
import { stderrLogger } from "./logger.js";
import { withExtensionProviders } from "./model-routing.js";
import { openLiveSession, type RecordToOpen, type RuntimeParts } from "./open-session.js";
import { liveSessionAccess, openToolSet } from "./open-tool-set.js";
import type { RuntimeOptions } from "./options.js";
import type { CrowSessionImpl } from "./session.js";
import { loadStoredHistory, recordOf } from "./stored-history.js";
import { defaultSystemPrompt, type SessionSystemPrompt, sessionSystemPrompt } from "./system-prompt.js";
import { checkAdditionalDirectories, storeDirectories } from "./workspace-roots.js";

/**
 * Creates the runtime. Rejects only when the store cannot be opened or a permission rule is invalid; extensions
 * that fail to load are reported in `extensionErrors` (and to each session's listeners as a problem).
 */
export async function createRuntime(options: RuntimeOptions = {}): Promise<Crow> {
  const logger = options.logger ?? stderrLogger;
  const home = options.home ?? crowHome();
  const registry = new ExtensionRegistry(logger, options.config ?? {});
  // Before the store opens: invalid permission rules reject here, leaving nothing open.
  const gates = permissionGates(
    (session, name) => (session as CrowSessionImpl).tools.resolve(name)?.readOnly,
    options.permissions,
    (session, name) => (session as CrowSessionImpl).tools.resolve(name)?.confined?.() === true,
  );

  let store: Store | undefined;
  let ownsStore = false;
  if (options.store !== false) {
    if (typeof options.store === "object") store = options.store;
    else {
      store = await openStore(options.store ?? ":memory:", { baseDir: home });
      ownsStore = true;
    }
  }

  const checkpoints = setupCheckpoints(store, home, options.checkpoints, logger);

  // Built-ins first, through the same API as everyone else.
  const compactions = new SessionCompactions();
  const builtins = builtinExtensions({
    gates,
    compactions,
    store,
    home,
    checkpoints,
    models: options.models,
    disabled: options.disableBuiltins ?? [],
  });
  const say = (message: string) => logger.warn(message);
  const builtinErrors = await loadExtensions(builtins, registry, { baseDir: home, log: say });
  const extensionErrors = [
    ...builtinErrors,
    ...(await loadExtensions(options.extensions ?? [], registry, {
      baseDir: options.extensionBaseDir ?? home,
      log: say,
    })),
  ];

  const live = new Map<string, CrowSessionImpl>();
  const leases = store
    ? new RuntimeLeases(
        store.leases,
        (id) =>
          live
            .get(id)
            ?.lostTo(
              `Session ${id} was taken over by another Crow process: this one no longer runs it (load it again to take it back).`,
            ),
        say,
      )
    : undefined;
  const models = options.models ?? [];
  const threshold = (model: string | undefined): number =>
    thresholdFor(options.compactionThreshold, model, models.find((m) => m.name === model)?.contextWindow);
  return new Runtime(
    {
      options,
      registry,
      llm: withExtensionProviders(options.llm, models, registry.providers),
      loop: loopSettings(options),
      store,
      logger,
      rewinder: checkpoints.rewinder,
      live,
      leases,
      threshold,
      compactions,
    },
    { home, ownsStore, checkpoints, extensionErrors },
  );
}

/** The runtime `createRuntime` returns: its sessions, live and stored, and the extensions' methods. */
class Runtime implements Crow {
  private readonly parts: RuntimeParts;

  constructor(
    parts: Omit<RuntimeParts, "crow">,
    private readonly own: { home: string; ownsStore: boolean; checkpoints: Checkpointing; extensionErrors: string[] },
  ) {
    this.parts = { ...parts, crow: this };
  }

  get store(): Store | undefined {
    return this.parts.store;
  }

  get extensionErrors(): string[] {
    return this.own.extensionErrors;
  }

  async newSession(request: NewSessionOptions): Promise<CrowSession> {
    const { options, store, live } = this.parts;
    const mode = request.mode ?? options.mode ?? "code";
    const model = request.model ?? options.model ?? null;
    const additionalDirectories = await checkAdditionalDirectories(request.additionalDirectories ?? [], request.cwd);
    const id = sessionSlug();
    // The tool set (spawning MCP servers) is the slow part of opening a session: start it first and render the
    // prompt and store the row meanwhile.
    const toolsReady = openToolSet(request.tools ?? options.tools, {
      sessionId: id,
      cwd: request.cwd,
      additionalDirectories,
      ...liveSessionAccess(live, id, mode),
      ...(request.parentId ? { parentId: request.parentId } : {}),
    });
    // Handled below (awaited); this only keeps an early failure from counting as unhandled meanwhile.
    toolsReady.catch(() => undefined);
    let prompt: SessionSystemPrompt;
    let record: RecordToOpen;
    let tools: ToolSet | undefined;
    try {
      prompt = request.systemPrompt
        ? { systemPrompt: request.systemPrompt, promptId: null, promptArgs: null }
        : await sessionSystemPrompt(
            options.systemPrompt,
            request.cwd,
            additionalDirectories,
            { ...this.parts, home: this.own.home },
            request.promptPaths,
          );
      record = store
        ? await store.createSession({
            id,
            cwd: request.cwd,
            mode,
            model,
            systemPrompt: prompt.systemPrompt,
            promptId: prompt.promptId,
            promptArgs: prompt.promptArgs,
            additionalDirectories,
            ...(request.parentId ? { parentId: request.parentId } : {}),
          })
        : {
            id,
            cwd: request.cwd,
            title: null,
            mode,
            model,
            requestParams: null,
            additionalDirectories,
            parentId: request.parentId ?? null,
          };
      // Owned from the start: another process loading it by id while it is open here is refused.
      if (store) await this.parts.leases?.claim(id);
      tools = await toolsReady;
    } catch (error) {
      if (store) await this.parts.leases?.release(id);
      // Do not leave spawned servers behind when the session could not be created.
      void toolsReady.then((started) => started?.close?.()).catch(() => undefined);
      throw error;
    }
    return openLiveSession(
      this.parts,
      { ...record, model },
      {
        history: [],
        systemPrompt: prompt.systemPrompt,
        tools,
        askPermission: request.askPermission ?? options.askPermission,
        askUser: request.askUser ?? options.askUser,
        resumed: false,
        ...(prompt.warning ? { problems: [prompt.warning] } : {}),
      },
    );
  }

  async loadSession(id: string, request: LoadSessionOptions = {}): Promise<CrowSession> {
    const { store, live } = this.parts;
    if (!store) throw new Error("this Crow has no store: sessions cannot be loaded");
    const running = live.get(id);
    if (running?.running)
      throw new SessionBusyError("this session is running a prompt; cancel it before loading it again");
    if (running) await running.close();
    const stored = await store.getSession(id);
    if (!stored || stored.archivedFrom !== null) throw new MethodError(-32002, `session not found: ${id}`);
    // One live owner per session: refused while another process has it open (unless taken over).
    await this.parts.leases?.claim(id, request.takeOver ?? false);
    try {
      return await this.openStored(stored, request);
    } catch (error) {
      await this.parts.leases?.release(id);
      throw error;
    }
  }

  private async openStored(stored: SessionRecord, request: LoadSessionOptions): Promise<CrowSession> {
    const { options, store, live } = this.parts;
    if (!store) throw new Error("this Crow has no store: sessions cannot be loaded");
    const cwd = request.cwd ?? stored.cwd;
    const dirs = request.additionalDirectories;
    const record = await storeDirectories(
      store,
      stored,
      dirs === undefined ? stored.additionalDirectories : await checkAdditionalDirectories(dirs, cwd),
    );
    const { history, lastPromptTokens } = await loadStoredHistory(store, record.id);
    // The host says where the project is now (it may have moved); remember it.
    if (cwd !== record.cwd) await store.updateSession(record.id, { cwd });
    const tools = await openToolSet(request.tools ?? options.tools, {
      sessionId: record.id,
      cwd,
      additionalDirectories: record.additionalDirectories,
      ...liveSessionAccess(
        live,
        record.id,
        record.mode === "ask" || record.mode === "read-only" ? record.mode : "code",
      ),
      ...(record.parentId ? { parentId: record.parentId } : {}),
    });
    return openLiveSession(
      this.parts,
      { ...record, cwd },
      {
        history,
        systemPrompt: record.systemPrompt ?? defaultSystemPrompt(cwd),
        tools,
        askPermission: request.askPermission ?? options.askPermission,
        askUser: request.askUser ?? options.askUser,
        resumed: true,
        ...(lastPromptTokens !== undefined ? { lastPromptTokens } : {}),
      },
    );
  }

  async forkSession(id: string, request: Parameters<Crow["forkSession"]>[1] = {}): ReturnType<Crow["forkSession"]> {
    const { store, live } = this.parts;
    if (!store) throw new Error("this Crow has no store: sessions cannot be forked");
    // A live source may still be storing its latest messages: the fork copies them too.
    await live.get(id)?.flush();
    try {
      return await store.forkSession(id, {
        ...(request.cwd ? { cwd: request.cwd } : {}),
        ...(request.additionalDirectories
          ? {
              additionalDirectories: await checkAdditionalDirectories(
                request.additionalDirectories,
                request.cwd ?? "/",
              ),
            }
          : {}),
      });
    } catch (error) {
      if (error instanceof SessionNotFoundError) throw new MethodError(-32002, `session not found: ${id}`);
      throw error;
    }
  }

  session(id: string): CrowSession | undefined {
    return this.parts.live.get(id);
  }

  async listSessions(request: Parameters<Crow["listSessions"]>[0] = {}): ReturnType<Crow["listSessions"]> {
    const { store, live } = this.parts;
    if (!store) {
      const listed = [...live.values()].filter(
        (s) => !(request.topLevel && s.parentId) && !(request.prompted && s.history.length === 0),
      );
      return { sessions: listed.map(recordOf) };
    }
    return store.listSessions(request);
  }

  methods(): string[] {
    return [...this.parts.registry.methods.keys()];
  }

  providers(): string[] {
    return [...this.parts.registry.providers.keys()];
  }

  async callMethod(name: string, params: unknown, ctx: Partial<MethodContext> = {}): Promise<unknown> {
    const method = this.parts.registry.methods.get(name);
    if (!method) throw new MethodError(-32601, `Method not found: ${name}`);
    try {
      return await method.value(params, { crow: this, signal: ctx.signal ?? new AbortController().signal });
    } catch (error) {
      if (error instanceof MethodError) throw error;
      throw new MethodError(-32603, `${name} failed: ${errorText(error)}`);
    }
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.parts.live.values()].map((s) => s.close()));
    await this.parts.leases?.close();
    // Before the store closes: the collection reads it.
    await this.own.checkpoints.close();
    if (this.own.ownsStore) await this.parts.store?.close();
  }
}
