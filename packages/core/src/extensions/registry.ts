/**
 * What the extensions of one Crow instance registered: hooks (installed on every session's bus), session setups,
 * in-process tools, slash commands, custom methods and providers. `apiFor` makes the `ExtensionAPI` object handed to
 * one extension; every registration is tagged with the extension's name so failures can say whose they were.
 */
import { z } from "zod";
import type { CommandInfo, CrowSession } from "../api/types.js";
import { errorText } from "../error-text.js";
import type { HookBus } from "../hooks/bus.js";
import type { HookHandlers, HookPoint } from "../hooks/types.js";
import type {
  CommandRegistration,
  ExtensionAPI,
  ExtensionHookHandlers,
  Logger,
  MethodHandler,
  PromptArgsProvider,
  ProviderFactory,
  ToolRegistration,
} from "./api.js";

type Awaitable<T> = T | Promise<T>;

interface HookEntry {
  extension: string;
  point: HookPoint;
  handler: ExtensionHookHandlers[HookPoint];
}

export interface SessionSetup {
  extension: string;
  setup: (session: CrowSession) => Awaitable<undefined | (() => Awaitable<void>)>;
}

export interface Registered<T> {
  extension: string;
  value: T;
}

/** A logger whose lines start with `[name]`. */
export function prefixedLogger(logger: Logger, name: string): Logger {
  return {
    debug: (m, ...d) => logger.debug(`[${name}] ${m}`, ...d),
    info: (m, ...d) => logger.info(`[${name}] ${m}`, ...d),
    warn: (m, ...d) => logger.warn(`[${name}] ${m}`, ...d),
    error: (m, ...d) => logger.error(`[${name}] ${m}`, ...d),
  };
}

export class ExtensionRegistry {
  private readonly hooks: HookEntry[] = [];
  readonly setups: SessionSetup[] = [];
  readonly tools = new Map<string, Registered<ToolRegistration>>();
  readonly commands = new Map<string, Registered<CommandRegistration>>();
  readonly methods = new Map<string, Registered<MethodHandler>>();
  readonly providers = new Map<string, Registered<ProviderFactory>>();
  readonly promptArgs: Registered<PromptArgsProvider>[] = [];
  readonly sessionCommands: Registered<(session: CrowSession) => CommandInfo[]>[] = [];

  constructor(
    private readonly logger: Logger,
    private readonly config: Readonly<Record<string, unknown>>,
  ) {}

  /** The API object of one extension. */
  apiFor(name: string, options: Readonly<Record<string, unknown>> = {}): ExtensionAPI {
    const log = prefixedLogger(this.logger, name);
    return {
      name,
      options,
      config: this.config,
      log,
      z,
      on: (point, handler) => {
        const entry: HookEntry = { extension: name, point, handler: handler as ExtensionHookHandlers[HookPoint] };
        this.hooks.push(entry);
        return () => {
          const at = this.hooks.indexOf(entry);
          if (at >= 0) this.hooks.splice(at, 1);
        };
      },
      onSession: (setup) => {
        this.setups.push({ extension: name, setup });
      },
      registerTool: <S extends z.ZodType>(tool: ToolRegistration<S>) => {
        if (!tool.name || !/^[a-zA-Z0-9_-]{1,64}$/.test(tool.name)) {
          throw new Error(`tool name "${tool.name}" must be 1-64 letters, digits, _ or -`);
        }
        // Stored with its schema type erased: `execute` takes z.infer<S>, which TypeScript cannot widen to the erased
        // form (a parameter); sound because every call validates its arguments with `tool.parameters` first.
        this.tools.set(tool.name, { extension: name, value: tool as unknown as ToolRegistration });
      },
      registerCommand: (command, registration) => {
        const bare = command.replace(/^\//, "");
        if (!/^[a-zA-Z0-9_-]+$/.test(bare))
          throw new Error(`command name "${command}" must be letters, digits, _ or -`);
        this.commands.set(bare, { extension: name, value: registration });
      },
      registerMethod: (method, handler) => {
        if (!method.startsWith("_")) throw new Error(`custom method "${method}" must start with "_" (e.g. _crow/x)`);
        this.methods.set(method, { extension: name, value: handler });
      },
      registerProvider: (provider, factory) => {
        this.providers.set(provider, { extension: name, value: factory });
      },
      registerPromptArgs: (provider) => {
        this.promptArgs.push({ extension: name, value: provider });
      },
      registerSessionCommands: (provider) => {
        this.sessionCommands.push({ extension: name, value: provider });
      },
    };
  }

  /** The session's own commands (`registerSessionCommands`) in registration order; a provider that throws is logged. */
  sessionCommandsFor(session: CrowSession): CommandInfo[] {
    return this.sessionCommands.flatMap(({ extension, value }) => {
      try {
        return value(session);
      } catch (error) {
        this.logger.warn(`[${extension}] session commands failed: ${errorText(error)}`);
        return [];
      }
    });
  }

  /**
   * The extensions' system prompt variables for a new session in `cwd`, merged in registration order (`skills_hint`
   * lines are joined). Providers run concurrently; one that throws is logged and contributes nothing.
   */
  async promptArgsFor(cwd: string): Promise<Record<string, unknown>> {
    const results = await Promise.all(
      this.promptArgs.map(async ({ extension, value }) => {
        try {
          return (await value({ cwd })) ?? {};
        } catch (error) {
          const message = errorText(error);
          this.logger.warn(`[${extension}] system prompt variables failed: ${message}`);
          return {};
        }
      }),
    );
    const merged: Record<string, unknown> = {};
    const hints: string[] = [];
    for (const args of results) {
      const { skills_hint: hint, ...rest } = args;
      Object.assign(merged, rest);
      if (typeof hint === "string" && hint.trim() !== "") hints.push(hint.trim());
    }
    if (hints.length > 0) merged.skills_hint = hints.join("\n");
    return merged;
  }

  /**
   * Installs every registered hook on a session's bus, in registration order, each named `<extension>:<point>` so a
   * failure names its extension. Handlers get the session in their context.
   */
  installHooks(bus: HookBus, session: CrowSession): void {
    for (const { extension, point, handler } of this.hooks) {
      const wrapped = ((event: never, ctx: Parameters<HookHandlers[HookPoint]>[1]) =>
        (handler as (e: never, c: unknown) => unknown)(event, { ...ctx, session })) as HookHandlers[typeof point];
      bus.on(point, wrapped, { name: `${extension}:${point}` });
    }
  }
}
