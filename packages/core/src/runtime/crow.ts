/**
 * `createRuntime(options)`: the runtime as a library. It loads the built-in extensions and the given ones, opens the
 * store, and makes sessions (new or loaded) whose tools are the extensions' in-process tools plus the session's tool
 * source. `crow acp` is one host of this runtime (a translator over it); SDK users are another.
 */

import {
  type Crow,
  type CrowSession,
  type LoadSessionOptions,
  type NewSessionOptions,
  SessionBusyError,
} from "../api/types.js";
import { SessionCompactions, thresholdFor } from "../compaction/index.js";
import { errorText } from "../error-text.js";
import { MethodError } from "../extensions/api.js";
import { askUserExtension } from "../extensions/ask-user.js";
import {
  commandsExtension,
  compactionExtension,
  doomLoopExtension,
  permissionGates,
  permissionsExtension,
  persistenceExtension,
} from "../extensions/builtin.js";
import { loadExtensions } from "../extensions/load.js";
import { ExtensionRegistry } from "../extensions/registry.js";
import { SessionToolSet } from "../extensions/session-tool-set.js";
import { skillsExtension } from "../extensions/skills.js";
import { subagentsExtension } from "../extensions/subagents.js";
import { todoExtension } from "../extensions/todo.js";
import { crowHome } from "../home.js";
import type { ChatMessage } from "../messages.js";
import { prepareSystemPrompt } from "../prompt/system-prompt.js";
import { sessionSlug } from "../store/ids.js";
import { openStore } from "../store/open.js";
import { SessionNotFoundError, type SessionRecord, type Store } from "../store/types.js";
import type { ToolSet } from "../tools.js";
import { setupCheckpoints } from "./checkpointing.js";
import { stderrLogger } from "./logger.js";
import { withExtensionProviders } from "./model-routing.js";
import { liveSessionAccess, openToolSet } from "./open-tool-set.js";
import type { RuntimeOptions } from "./options.js";
import { CrowSessionImpl } from "./session.js";
import { loadStoredHistory, recordOf } from "./stored-history.js";
import { defaultSystemPrompt } from "./system-prompt.js";
import { checkAdditionalDirectories, storeDirectories } from "./workspace-roots.js";

/** What opening a live session needs of its record. */
type SessionBasics = Pick<
  SessionRecord,
  "id" | "cwd" | "title" | "mode" | "model" | "requestParams" | "additionalDirectories"
> & { parentId?: string | null };

/**
 * Creates the runtime. Rejects only when the store cannot be opened or a permission rule is invalid; extensions
 * that fail to load are reported in `extensionErrors` (and to each session's listeners as a problem).
 */
export async function createRuntime(options: RuntimeOptions = {}): Promise<Crow> {
  const logger = options.logger ?? stderrLogger;
  const home = options.home ?? crowHome();
  const registry = new ExtensionRegistry(logger, options.config ?? {});
  const live = new Map<string, CrowSessionImpl>();
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
  const disabled = new Set(options.disableBuiltins ?? []);
  const compactions = new SessionCompactions();
  const builtins = [
    { name: "doom-loop", extension: doomLoopExtension(gates) },
    { name: "permissions", extension: permissionsExtension(gates) },
    { name: "compaction", extension: compactionExtension(compactions) },
    ...(store
      ? [
          {
            name: "persistence",
            extension: persistenceExtension(store, (session, title, at) =>
              (session as CrowSessionImpl).setTitle(title, at),
            ),
          },
        ]
      : []),
    {
      name: "commands",
      extension: commandsExtension((error): error is SessionBusyError => error instanceof SessionBusyError),
    },
    ...checkpoints.builtins,
    { name: "skills", extension: skillsExtension({ home }) },
    {
      name: "subagents",
      extension: subagentsExtension({
        toolsOf: (session) => (session as CrowSessionImpl).tools,
        knowsModel: (name) => !options.models?.length || options.models.some((m) => m.name === name),
      }),
    },
    { name: "todo", extension: todoExtension },
    { name: "ask-user", extension: askUserExtension },
  ].filter((b) => !disabled.has(b.name));
  const say = (message: string) => logger.warn(message);
  const builtinErrors = await loadExtensions(builtins, registry, { baseDir: home, log: say });
  const extensionErrors = [
    ...builtinErrors,
    ...(await loadExtensions(options.extensions ?? [], registry, {
      baseDir: options.extensionBaseDir ?? home,
      log: say,
    })),
  ];

  const models = options.models ?? [];
  const llm = withExtensionProviders(options.llm, models, registry.providers);

  async function open(
    record: SessionBasics,
    init: {
      history: ChatMessage[];
      systemPrompt: string;
      tools: ToolSet | undefined;
      askPermission: NewSessionOptions["askPermission"];
      askUser: NewSessionOptions["askUser"];
      resumed: boolean;
      /** Problems found while preparing it, shown when it opens (a user prompt template that failed). */
      problems?: string[];
      /** The stored history's last prompt size (see stored-history.ts). */
      lastPromptTokens?: number;
    },
  ): Promise<CrowSessionImpl> {
    let session: CrowSessionImpl | undefined;
    const mode =
      record.mode === "code" || record.mode === "ask" || record.mode === "read-only" ? record.mode : undefined;
    // A stored model that is no longer known falls back to the default.
    const known = record.model && (models.length === 0 || models.some((m) => m.name === record.model));
    // The session's own request settings (the reasoning effort picked in the editor).
    const effort = record.requestParams?.reasoning_effort;
    const tools = new SessionToolSet(registry.tools, init.tools, () => {
      if (!session) throw new Error("the session is not open yet");
      return { session, crow };
    });
    session = new CrowSessionImpl({
      id: record.id,
      cwd: record.cwd,
      additionalDirectories: record.additionalDirectories,
      ...(record.parentId ? { parentId: record.parentId } : {}),
      crow,
      registry,
      llm,
      model: known ? (record.model ?? undefined) : options.model,
      ...(typeof effort === "string" ? { reasoningEffort: effort } : {}),
      mode: mode ?? options.mode ?? "code",
      history: init.history,
      systemPrompt: init.systemPrompt,
      title: record.title,
      tools,
      ...(init.askPermission ? { askPermission: init.askPermission } : {}),
      ...(init.askUser ? { askUser: init.askUser } : {}),
      makeCompaction: (s) =>
        compactions.open(s, {
          sessionId: record.id,
          threshold: () =>
            thresholdFor(options.compactionThreshold, s.model, models.find((m) => m.name === s.model)?.contextWindow),
          ...(store ? { store } : {}),
          beforeSwap: () => s.flush(),
          // Extensions' `compacted` hooks (the todo extension keeps the plan in the compacted history).
          rewrite: (event, signal) => s.bus.transformCompacted(event, { sessionId: record.id, signal }),
        }),
      ...(options.maxStepsPerTurn !== undefined ? { maxStepsPerTurn: options.maxStepsPerTurn } : {}),
      ...(options.params ? { params: options.params } : {}),
      logger,
      ...(store ? { clearStored: (id: string) => (store as Store).replaceMessages(id, []) } : {}),
      rewinder: checkpoints.rewinder,
      onClose: (s) => {
        if (live.get(s.id) === s) live.delete(s.id);
      },
    });
    if (init.lastPromptTokens !== undefined) session.compaction.observe(init.lastPromptTokens);
    live.set(record.id, session);
    await session.start(init.resumed, init.problems);
    return session;
  }

  async function systemPromptFor(
    cwd: string,
    additionalDirectories: readonly string[],
  ): Promise<{
    systemPrompt: string;
    promptId: string | null;
    promptArgs: Record<string, unknown> | null;
    warning?: string;
  }> {
    const choice = options.systemPrompt ?? {};
    if (typeof choice === "string") return { systemPrompt: choice, promptId: null, promptArgs: null };
    if (typeof choice === "function") return { systemPrompt: await choice(cwd), promptId: null, promptArgs: null };
    // Extensions' variables (the skills extension's `skills_hint`), then the host's own hint.
    const { skills_hint: extensionHint, ...extraArgs } = await registry.promptArgsFor(cwd);
    const skillsHint = [typeof extensionHint === "string" ? extensionHint : "", choice.skillsHint ?? ""]
      .filter((hint) => hint !== "")
      .join("\n");
    const prepared = await prepareSystemPrompt(cwd, {
      additionalDirectories,
      home: choice.home ?? home,
      ...(store ? { store } : {}),
      ...(skillsHint ? { skillsHint } : {}),
      ...(choice.hidden ? { hidden: choice.hidden } : {}),
      extraArgs,
    });
    if (prepared.warning) logger.warn(prepared.warning);
    const { systemPrompt, promptId, promptArgs, warning } = prepared;
    return { systemPrompt, promptId, promptArgs, ...(warning ? { warning } : {}) };
  }

  const crow: Crow = {
    get store() {
      return store;
    },
    extensionErrors,
    async newSession(request: NewSessionOptions): Promise<CrowSession> {
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
      let prompt: Awaited<ReturnType<typeof systemPromptFor>>;
      let record: SessionBasics;
      let tools: ToolSet | undefined;
      try {
        prompt = request.systemPrompt
          ? { systemPrompt: request.systemPrompt, promptId: null, promptArgs: null }
          : await systemPromptFor(request.cwd, additionalDirectories);
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
        tools = await toolsReady;
      } catch (error) {
        // Do not leave spawned servers behind when the session could not be created.
        void toolsReady.then((started) => started?.close?.()).catch(() => undefined);
        throw error;
      }
      return open(
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
    },
    async loadSession(id: string, request: LoadSessionOptions = {}): Promise<CrowSession> {
      if (!store) throw new Error("this Crow has no store: sessions cannot be loaded");
      const running = live.get(id);
      if (running?.running)
        throw new SessionBusyError("this session is running a prompt; cancel it before loading it again");
      if (running) await running.close();
      const stored = await store.getSession(id);
      if (!stored || stored.archivedFrom !== null) throw new MethodError(-32002, `session not found: ${id}`);
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
      return open(
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
    },
    async forkSession(id, request = {}) {
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
    },
    session: (id) => live.get(id),
    async listSessions(request = {}) {
      if (!store) return { sessions: [...live.values()].map(recordOf) };
      return store.listSessions(request);
    },
    methods: () => [...registry.methods.keys()],
    providers: () => [...registry.providers.keys()],
    async callMethod(name, params, ctx = {}) {
      const method = registry.methods.get(name);
      if (!method) throw new MethodError(-32601, `Method not found: ${name}`);
      try {
        return await method.value(params, { crow, signal: ctx.signal ?? new AbortController().signal });
      } catch (error) {
        if (error instanceof MethodError) throw error;
        throw new MethodError(-32603, `${name} failed: ${errorText(error)}`);
      }
    },
    async close() {
      await Promise.allSettled([...live.values()].map((s) => s.close()));
      // Before the store closes: the collection reads it.
      await checkpoints.close();
      if (ownsStore) await store?.close();
    },
  };
  return crow;
}
