/**
 * Signing in over ACP. Crow's credentials are its configuration (a provider, its key, a model), which `crow init`
 * writes; so its one auth method is ACP's Terminal Auth: the editor runs `crow init` in a terminal, then opens
 * sessions again. Until a usable model is configured, opening a session answers the auth-required error (-32000)
 * naming that method, instead of a session whose first prompt fails.
 *
 * What "usable" costs (session/new must stay fast for a configured user):
 * - the configuration check (a provider, a model, the key `crow init` saved not emptied by logout): no I/O;
 * - a loopback provider: one TCP connect, awaited (the kernel answers at once; refused = its server is not running);
 * - a remote provider: one DNS lookup, started when the client initializes and consulted only once it has an answer,
 *   so it never delays session/new (a mistyped host is caught from the first session/new after the lookup).
 * When something is missing and no session of this connection is open, the configuration is read again first:
 * that is how the `crow init` the user just ran takes effect without restarting the agent.
 */
import {
  type AgentApp,
  type AuthMethod,
  type ClientCapabilities,
  type LogoutResponse,
  methods,
  RequestError,
} from "@agentclientprotocol/sdk";
import { homeDir } from "@crow/core/home";
import { log } from "../base/log.js";
import {
  type AgentConfig,
  ConfigError,
  describeLogout,
  displayPath,
  findModel,
  providerProblem,
  removeSavedKeys,
  signedOutText,
} from "../config/index.js";
import { isLoopbackUrl, probeEndpoint, type Reach } from "./reachability.js";

/** The id of Crow's one auth method (`crow init` in a terminal). */
export const SETUP_METHOD_ID = "crow-init";

/** How the agent process was started, so a terminal can run `crow init` the same way. */
export interface Launch {
  command: string;
  args: string[];
}

export interface SignInOptions {
  /** Reads the configuration again (config.yaml, .env, the environment); throws `ConfigError` when it is broken. */
  reload: () => Promise<AgentConfig>;
  /** The agent's own command line without its arguments (default: this Node and this script). */
  launch?: Launch;
}

/**
 * Whether the client can run a terminal auth method: ACP's `auth.terminal`, or the `_meta["terminal-auth"]` flag
 * clients used before the typed method (Zed's first version of it; the ACP registry's verifier still sends only it).
 */
export function canRunTerminalAuth(capabilities: ClientCapabilities | undefined): boolean {
  const meta = capabilities?._meta as Record<string, unknown> | null | undefined;
  return capabilities?.auth?.terminal === true || meta?.["terminal-auth"] === true;
}

/**
 * The auth methods for a client: Terminal Auth running `crow init`, only to a client that can run it (ACP: "Agents
 * MUST advertise this method only when the client enabled its terminal authentication capability"). `args: ["init"]`
 * works both ways clients read it: appended to the configured `crow acp` (ACP's schema: `crow acp init`) or in its
 * place (the registry's AUTHENTICATION.md: `crow init`). `_meta["terminal-auth"]` is the older spelling with a full
 * command line, for clients that know only that.
 */
export function authMethods(capabilities: ClientCapabilities | undefined, launch: Launch): AuthMethod[] {
  if (!canRunTerminalAuth(capabilities)) return [];
  return [
    {
      type: "terminal",
      id: SETUP_METHOD_ID,
      name: "Set up Crow",
      description:
        "Runs crow init in a terminal: choose an OpenAI-compatible provider, enter its API key, pick models.",
      args: ["init"],
      _meta: { "terminal-auth": { command: launch.command, args: [...launch.args, "init"], label: "Set up Crow" } },
    },
  ];
}

/** Why `config` cannot run a prompt with its default model, without I/O; undefined when nothing is missing. */
export function configProblem(config: AgentConfig): string | undefined {
  const problem = providerProblem(config, config.model);
  if (problem) return problem;
  const provider = config.providers[findModel(config, config.model)?.provider ?? ""];
  return provider ? signedOutText(provider) : undefined;
}

/** The base URL of the default model's provider, when one is configured. */
function providerURL(config: AgentConfig): string | undefined {
  const model = findModel(config, config.model);
  return model ? config.providers[model.provider]?.baseURL : undefined;
}

/** The sign-in state of one agent: probes its provider and tells whether a session may open. */
export class SignIn {
  readonly launch: Launch;
  /** The lookups of remote providers, by base URL: the latest answer, and whether a newer lookup is under way. */
  private readonly remote = new Map<string, { answer?: Reach; asking: boolean }>();

  constructor(private readonly options: SignInOptions) {
    this.launch = options.launch ?? { command: process.execPath, args: process.argv.slice(1, 2) };
  }

  /** The auth methods for a client with these capabilities. */
  methods(capabilities: ClientCapabilities | undefined): AuthMethod[] {
    return authMethods(capabilities, this.launch);
  }

  /** The configuration as it is on disk now; throws `ConfigError` when it does not load. */
  reload(): Promise<AgentConfig> {
    return this.options.reload();
  }

  /** Starts the lookup of a remote provider in the background (initialize calls it: it is done before sessions are). */
  warm(config: AgentConfig): void {
    const url = providerURL(config);
    if (url === undefined || isLoopbackUrl(url) || this.remote.has(url)) return;
    this.ask(url);
  }

  /** Looks `url` up in the background; its answer replaces the previous one when it comes. */
  private ask(url: string): void {
    const entry = this.remote.get(url) ?? { asking: false };
    this.remote.set(url, entry);
    if (entry.asking) return;
    entry.asking = true;
    void probeEndpoint(url).then((answer) => {
      entry.answer = answer;
      entry.asking = false;
    });
  }

  /** Why `config` cannot serve a session now (see the file's comment for what each check costs). */
  async problem(config: AgentConfig): Promise<string | undefined> {
    const missing = configProblem(config);
    if (missing) return missing;
    const url = providerURL(config);
    if (url === undefined) return undefined;
    let reach: Reach | undefined;
    if (isLoopbackUrl(url)) reach = await probeEndpoint(url);
    else {
      this.warm(config);
      reach = this.remote.get(url)?.answer;
      // The failure stands until a newer lookup says otherwise (the DNS entry may have been fixed meanwhile).
      if (reach && !reach.ok) this.ask(url);
    }
    return reach && !reach.ok ? `The provider at ${url} cannot be reached: ${reach.reason}` : undefined;
  }

  /**
   * The configuration sessions open with: `config` when it is usable, else the one read again now (when `reload`
   * is allowed: no session of this connection holds the old one) if that one is. Otherwise throws the auth-required
   * error, saying what is missing and how to sign in.
   */
  async usable(config: AgentConfig, reload: boolean, methods: AuthMethod[]): Promise<AgentConfig> {
    let problem = await this.problem(config);
    if (problem === undefined) return config;
    if (reload) {
      try {
        const next = await this.options.reload();
        problem = await this.problem(next);
        if (problem === undefined) return next;
      } catch (error) {
        if (!(error instanceof ConfigError)) throw error;
        problem = error.message;
      }
    }
    throw authRequired(problem, methods);
  }
}

/** The auth-required error: what is missing, and the way to sign in this client has. */
export function authRequired(problem: string, methods: AuthMethod[]): RequestError {
  const how =
    methods.length > 0
      ? `Sign in with "${methods[0]?.name}" (it runs crow init in a terminal), then start a new session.`
      : "Run crow init in a terminal (it asks for a provider, its API key and a model), then start a new session.";
  return RequestError.authRequired({ authMethods: methods }, `${problem} ${how}`);
}

/**
 * ACP `logout`: removes the keys `crow init` saved (config/saved-keys.ts) from the configuration as it is on disk now,
 * then adopts the configuration without them (`adopt` closes the open sessions: nothing goes on using a removed
 * key). The answer says what was removed, in `_meta["crow/logout"]` (LogoutResponse has no other field).
 */
export async function logoutHandler(
  signIn: SignIn,
  config: AgentConfig,
  adopt: (next: AgentConfig) => Promise<void>,
): Promise<LogoutResponse> {
  const current = await signIn.reload().catch((error: unknown) => {
    if (error instanceof ConfigError) return config;
    throw error;
  });
  const result = await removeSavedKeys(current);
  const message = describeLogout(result, (file) => displayPath(file, homeDir()));
  log.info(`logout: ${message}`);
  if (result.removed.length > 0) {
    const next = await signIn.reload().catch((error: unknown) => {
      // Signed out, and what is left does not load: the next session says so (auth-required, with the reason).
      if (error instanceof ConfigError) return undefined;
      throw error;
    });
    if (next) await adopt(next);
  }
  return { _meta: { "crow/logout": { removed: result.removed, file: result.file, message } } };
}

/**
 * The agent's sign-in check (a no-op without sign-in): `usable`, then adopting what it returns. One check at a time:
 * two session/new racing after `crow init` must not each adopt their own reading (each adopt closes the sessions of
 * the configuration it replaces).
 */
export function signInCheck(
  signIn: SignIn | undefined,
  agent: {
    config(): AgentConfig;
    canReload(): boolean;
    capabilities(): ClientCapabilities | undefined;
    adopt(next: AgentConfig): Promise<void>;
  },
): () => Promise<void> {
  let previous: Promise<void> = Promise.resolve();
  return () => {
    if (!signIn) return Promise.resolve();
    const check = previous.then(async () =>
      agent.adopt(await signIn.usable(agent.config(), agent.canReload(), signIn.methods(agent.capabilities()))),
    );
    previous = check.catch(() => {});
    return check;
  };
}

/** What the agent gives the auth methods: its sign-in (when offered), configuration, and how to check and replace it. */
export interface AuthHost {
  signIn: SignIn | undefined;
  config(): AgentConfig;
  /** Throws the auth-required error unless a session may open now (reading the configuration again if allowed). */
  signedIn(): Promise<void>;
  /** Makes a configuration read again the agent's (closing its open sessions). */
  adopt(next: AgentConfig): Promise<void>;
}

/** Registers `authenticate` and `logout` on the agent app. */
export function registerAuthMethods(app: AgentApp, host: AuthHost): AgentApp {
  const { signIn } = host;
  return (
    app
      // Terminal Auth is run by the client, not passed here; a client that asks anyway learns whether it worked.
      .onRequest(methods.agent.authenticate, async ({ params }) => {
        if (!signIn || params.methodId !== SETUP_METHOD_ID) {
          const offered = signIn ? `Crow's is "${SETUP_METHOD_ID}"` : "Crow offers none";
          throw RequestError.invalidParams(undefined, `unknown auth method "${params.methodId}": ${offered}`);
        }
        await host.signedIn();
        return {};
      })
      .onRequest(methods.agent.logout, async () => {
        if (!signIn) throw RequestError.methodNotFound(methods.agent.logout);
        return logoutHandler(signIn, host.config(), host.adopt);
      })
  );
}
