/**
 * What one ACP connection holds: the configuration (replaced when signing in reads it again), the client's
 * capabilities, the runtime (started on first use, or shared by `crow acp --listen`), sign-in, and the live
 * {@link AcpSession}s it opened. agent.ts maps the ACP methods onto this and onto the sessions.
 */
import {
  type AgentContext,
  type ClientCapabilities,
  type InitializeResponse,
  RequestError,
} from "@agentclientprotocol/sdk";
import { type Crow, type CrowSession, errorText, type LlmClient, SessionLeaseError } from "@crow/core";
import { BUILTIN_METHODS } from "@crow/core/methods";
import { log } from "../base/log.js";
import type { AgentConfig } from "../config/index.js";
import type { AcpMcpServer } from "../tools/types.js";
import { AcpSession, SessionAskers, type SessionConnection, subagentsOn } from "./acp-session.js";
import { withDirectoryErrors } from "./additional-directories.js";
import { SignIn, type SignInOptions, signInCheck } from "./auth.js";
import { clientBridge } from "./client-bridge.js";
import { initializeResponse } from "./initialize.js";

/** A request to open a session for the connection: a new one, or a stored one by id. */
export type OpenRequest =
  | { kind: "new"; cwd: string; mcpServers: AcpMcpServer[]; additionalDirectories: string[] }
  | {
      kind: "load";
      sessionId: string;
      cwd: string;
      mcpServers: AcpMcpServer[];
      additionalDirectories: string[];
      /** Take it over from another live process that has it open (its lease). */
      takeOver?: boolean;
    };

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

export class AcpConnection implements SessionConnection {
  /** Replaced when signing in (or out) reads the configuration again (see {@link adopt}). */
  private current: AgentConfig;
  private clientCapabilities: ClientCapabilities | undefined;
  /** The live sessions this connection opened, by id. */
  readonly sessions = new Map<string, AcpSession>();
  readonly signIn: SignIn | undefined;
  /** The runtime this connection started (none when it shares one). */
  private starting: Promise<Crow> | undefined;
  /** The runtime the sessions of this connection run on (set when one opens). */
  private started: Crow | undefined;
  /** Throws the auth-required error unless a session may open now (auth.ts); one check at a time. */
  readonly ready: () => Promise<void>;

  constructor(private readonly options: AgentOptions) {
    this.current = options.config;
    this.signIn = options.signIn ? new SignIn(options.signIn) : undefined;
    this.ready = signInCheck(this.signIn, {
      config: () => this.current,
      // The configuration is read again only while no session of this connection holds the runtime.
      canReload: () => this.sessions.size === 0,
      capabilities: () => this.clientCapabilities,
      adopt: (next) => this.adopt(next),
    });
  }

  config(): AgentConfig {
    return this.current;
  }

  capabilities(): ClientCapabilities | undefined {
    return this.clientCapabilities;
  }

  /** Whether the client takes subagent children as child sessions (replayed with their parent). */
  subagents(): boolean {
    return subagentsOn(this.clientCapabilities);
  }

  /** The runtime: shared, or started on first use (a failed start is retried by the next request). */
  private runtime(): Promise<Crow> {
    if (this.options.runtime) return this.options.runtime();
    this.starting ??= import("../sdk/create-crow.js").then(({ createCrow }) =>
      createCrow({
        config: this.current,
        ...(this.options.llm ? { llm: this.options.llm } : {}),
        ...(this.options.builtinTools !== undefined ? { builtinTools: this.options.builtinTools } : {}),
      }),
    );
    const started = this.starting;
    started.catch(() => {
      if (this.starting === started) this.starting = undefined;
    });
    return started;
  }

  /** The runtime, or the request error telling why it could not start. */
  async crow(): Promise<Crow> {
    try {
      return await this.runtime();
    } catch (error) {
      // A store that cannot be opened where it is configured, or without a SQLite driver, is a setup problem (exit 2).
      // The classes are imported as lazily as the runtime whose start just failed.
      const { StoreDriverError, StoreLocationError } = await import("@crow/core");
      const store = error instanceof StoreLocationError || error instanceof StoreDriverError;
      throw new RequestError(-32603, errorText(error), store ? { setup: "store" } : undefined);
    }
  }

  runtimeSession(id: string): CrowSession | undefined {
    // Only asked while a session of this connection runs: the runtime is up.
    return this.started?.session(id);
  }

  /**
   * `initialize`: keeps the client's capabilities and answers with the methods to advertise. The runtime loads in
   * the background (initialize answers before the loop, the LLM client and MCP are parsed), unless extensions must
   * be loaded to advertise their methods.
   */
  async initialize(capabilities: ClientCapabilities | undefined): Promise<InitializeResponse> {
    this.clientCapabilities = capabilities;
    this.signIn?.warm(this.current);
    const auth = this.signIn ? { methods: this.signIn.methods(capabilities) } : undefined;
    if (this.current.extensions.length === 0) {
      this.runtime().catch((error: unknown) => log.error("failed to start the agent runtime", error));
      return initializeResponse(BUILTIN_METHODS, auth);
    }
    // Extensions may add methods: advertise them all (a runtime that fails to start is retried by session/new).
    const crow = await this.runtime().catch((error: unknown) => {
      log.error("failed to start the agent runtime", error);
      return undefined;
    });
    return initializeResponse(crow?.methods() ?? BUILTIN_METHODS, auth);
  }

  /** The live session `sessionId`, or the session-not-found error. */
  find(sessionId: string): AcpSession {
    const session = this.sessions.get(sessionId);
    if (!session) throw RequestError.sessionNotFound(sessionId);
    return session;
  }

  /** Opens a runtime session for this connection (its tools see the editor) as an {@link AcpSession}. */
  async open(client: AgentContext, request: OpenRequest): Promise<AcpSession> {
    await this.ready();
    const crow = await this.crow();
    this.started = crow;
    const config = this.current;
    const { toolRouterFactory } = await import("../sdk/create-crow.js");
    const askers = new SessionAskers(this.clientCapabilities);
    const perSession = {
      tools: toolRouterFactory(config, {
        mcpServers: request.mcpServers,
        client: (sessionId) => clientBridge(client, sessionId, this.clientCapabilities),
        builtin: this.options.builtinTools ?? true,
      }),
      askPermission: askers.askPermission,
      // Questions to the user (ask_user, MCP elicitations): only when the client can show them.
      askUser: askers.askUser,
    };
    const { cwd, additionalDirectories } = request;
    const session = await withDirectoryErrors(() =>
      request.kind === "new"
        ? crow.newSession({ cwd, additionalDirectories, ...perSession })
        : crow.loadSession(request.sessionId, {
            cwd,
            additionalDirectories,
            takeOver: request.takeOver,
            ...perSession,
          }),
    ).catch((error: unknown) => {
      // Open in another live process: the message says where and how to take it over.
      if (error instanceof SessionLeaseError) {
        throw new RequestError(-32603, error.message, { openElsewhere: error.holder });
      }
      throw error;
    });
    const opened = new AcpSession(session, client, this, askers);
    this.sessions.set(session.id, opened);
    return opened;
  }

  /** Stops a live session (its turn, its pending writes, its tools) and forgets it. */
  async dispose(session: AcpSession): Promise<void> {
    if (this.sessions.get(session.id) === session) this.sessions.delete(session.id);
    await session.close();
  }

  /**
   * Makes `next` the configuration: the open sessions are closed (they are stored; nothing keeps using what was
   * replaced, a removed key say) and the runtime starts again with it on the next request.
   */
  async adopt(next: AgentConfig): Promise<void> {
    if (next === this.current) return;
    await Promise.allSettled([...this.sessions.values()].map((s) => this.dispose(s)));
    this.current = next;
    await this.stopRuntime();
  }

  /** Closes every session and the runtime this connection started (a shared one stays open). */
  async close(): Promise<void> {
    await Promise.allSettled([...this.sessions.values()].map((s) => this.dispose(s)));
    await this.stopRuntime();
  }

  private async stopRuntime(): Promise<void> {
    const previous = this.starting;
    this.starting = undefined;
    this.started = undefined;
    await previous?.then((c) => c.close()).catch(() => {});
  }
}
