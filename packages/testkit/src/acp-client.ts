/**
 * An ACP test client on the SDK's client side, driving the built `crow acp` over real stdio:
 *
 *   const agent = await spawnAcpAgent({ llmUrl: mock.url, permissions: ["allow_once"], fs: true });
 *   const { sessionId } = await agent.newSession(ws.dir);
 *   const turn = await agent.prompt(sessionId, "fix the bug");   // { stopReason, updates }
 *
 * Every `session/update` is recorded; permission requests are answered from a script; fs and terminal requests are
 * served from the real disk and real processes (and the capabilities advertised accordingly).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { rmSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { Transform } from "node:stream";
import {
  type AuthCapabilities,
  type ClientConnection,
  type ClientContext,
  type ClientSessionCapabilities,
  type ContentBlock,
  type CreateElicitationRequest,
  type CreateElicitationResponse,
  type client,
  type InitializeResponse,
  type McpServer,
  methods,
  type NewSessionResponse,
  ndJsonStream,
  PROTOCOL_VERSION,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
  type SessionNotification,
  type SessionUpdate,
  type StopReason,
} from "@agentclientprotocol/sdk";
import { client as unstableClient } from "@agentclientprotocol/sdk/unstable";
import { agentEnv, privateHome } from "./acp-client-env.js";
import { AgentStdio } from "./acp-client-exit.js";
import { TestTerminals } from "./acp-client-terminal.js";
import { CROW_BIN } from "./paths.js";

/**
 * The client app builder with the unstable schema's parsers (the stable builder's code; its session/update parser
 * also admits the unstable kinds, `subagent_update` and `session_message` with `subagents`). Typed as the stable one:
 * recorded updates are typed with the stable schema; tests of unstable kinds cast them to the unstable types.
 */
const acpClient = unstableClient as unknown as typeof client;

/** How the scripted user answers a permission request. `wait` answers only when the turn is cancelled. */
export type PermissionChoice = "allow_once" | "allow_always" | "reject" | "cancelled" | "wait";

export interface AcpClientOptions {
  /** The mock LLM's base URL (OPENAI_BASE_URL of the agent). */
  llmUrl?: string;
  /** CROW_MODEL (default "mock-model"). */
  model?: string;
  /** CROW_MODELS. */
  models?: string[];
  /** Extra environment (wins over the defaults; a value of "" removes the variable). */
  env?: Record<string, string>;
  /** Answers to permission requests, in order (default: allow_once for all); a function decides per request. */
  permissions?: PermissionChoice[] | ((request: RequestPermissionRequest) => PermissionChoice);
  /** Serve `fs/read_text_file` / `fs/write_text_file` from the real disk (and advertise them). */
  fs?: boolean;
  /**
   * With `fs`: the editor's unsaved buffers by absolute path. Reads of these paths get the buffer, writes to them
   * change the buffer (the map) and leave the disk alone, as an editor with modified buffers would.
   */
  buffers?: Map<string, string>;
  /** Serve `terminal/*` with real processes (and advertise it). */
  terminal?: boolean;
  /**
   * Advertise `clientCapabilities.elicitation` with these modes and answer `elicitation/create` with `elicit`
   * (default: decline).
   */
  elicitation?: { form?: boolean; url?: boolean };
  elicit?: (request: CreateElicitationRequest) => ElicitationChoice;
  /** `clientCapabilities.session` to advertise (e.g. `{ compaction: {} }`, `{ notices: {} }`). */
  session?: ClientSessionCapabilities;
  /** `clientCapabilities.auth` to advertise (e.g. `{ terminal: true }`: the client can run Terminal Auth). */
  auth?: AuthCapabilities;
  /** `clientCapabilities._meta` to advertise (e.g. the older `{ "terminal-auth": true }`). */
  capabilitiesMeta?: Record<string, unknown>;
  /** Advertise `clientCapabilities.subagents` (unstable ACP): a task's child comes as a child session. */
  subagents?: boolean;
  /** Command to spawn (default: node CROW_BIN acp). */
  command?: { file: string; args: string[] };
  /** Working directory of the agent process (default: this process's; editors start it in the project). */
  cwd?: string;
}

/** How the scripted user answers a question (`elicitation/create`); `wait` answers only when it is withdrawn. */
export type ElicitationChoice = CreateElicitationResponse | "wait";

/** A question the agent asked, with the answer given (`withdrawn`: the agent cancelled it while it waited). */
export interface ReceivedElicitation {
  request: CreateElicitationRequest;
  choice: ElicitationChoice;
  withdrawn: boolean;
}

export interface PromptResult {
  stopReason: StopReason;
  /** The updates of this session received while the prompt ran, in order. */
  updates: SessionUpdate[];
}

export interface AcpTestClient {
  readonly agent: ClientContext;
  readonly process: ChildProcess;
  readonly initialize: InitializeResponse;
  /** Every `session/update` received, in order. */
  readonly notifications: readonly SessionNotification[];
  /** Every permission request received, with the choice made. */
  readonly permissionRequests: ReadonlyArray<{ request: RequestPermissionRequest; choice: PermissionChoice }>;
  /** Every `elicitation/create` received, in order. */
  readonly elicitations: readonly ReceivedElicitation[];
  /** The elicitation ids of every `elicitation/complete` received. */
  readonly completedElicitations: readonly string[];
  /** fs requests served: `read <path>` / `write <path>`. */
  readonly fsCalls: readonly string[];
  /** Every `fs/write_text_file` received, with the text the agent sent. */
  readonly fsWrites: ReadonlyArray<{ path: string; content: string }>;
  /** Commands run through `terminal/create`, and terminal ids released. */
  readonly terminalCalls: readonly string[];
  readonly releasedTerminals: readonly string[];
  /** Lines the agent wrote to stdout (every one must be JSON-RPC). */
  readonly stdoutLines: readonly string[];
  stderr(): string;
  /** Updates of one session so far. */
  updates(sessionId: string): SessionUpdate[];
  newSession(cwd: string, mcpServers?: McpServer[]): Promise<NewSessionResponse>;
  /** Sends a prompt and waits for its answer; rejects with the JSON-RPC error if the agent answers with one. */
  prompt(sessionId: string, prompt: string | ContentBlock[]): Promise<PromptResult>;
  /** Sends `session/cancel`, and answers this session's pending permission requests with `cancelled` (as ACP says). */
  cancel(sessionId: string): Promise<void>;
  /** Resolves with the first update of the session (from now on, or already received when `past`) matching. */
  waitForUpdate(sessionId: string, match: (update: SessionUpdate) => boolean, past?: boolean): Promise<SessionUpdate>;
  /** Writes a raw line to the agent's stdin (for garbage tests). */
  writeRaw(line: string): void;
  /** Resolves with the first stdout line (from now on) matching. */
  waitForLine(match: (line: string) => boolean): Promise<string>;
  /** Closes stdin and waits for the agent to exit; returns its exit code. */
  close(): Promise<number | null>;
}

/** Spawns `crow acp`, connects, and sends `initialize` (with the fs/terminal capabilities asked for). */
export async function spawnAcpAgent(options: AcpClientOptions = {}): Promise<AcpTestClient> {
  const command = options.command ?? { file: process.execPath, args: [CROW_BIN, "acp"] };
  const env = agentEnv(options);
  const home = privateHome(env, options);
  const child = spawn(command.file, command.args, {
    env,
    stdio: ["pipe", "pipe", "pipe"],
    ...(options.cwd ? { cwd: options.cwd } : {}),
  });
  let stderr = "";
  child.stderr?.setEncoding("utf8");
  child.stderr?.on("data", (text: string) => {
    stderr += text;
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  let closing = false;

  const stdoutLines: string[] = [];
  const lineWaiters: Array<{ match: (line: string) => boolean; resolve: (line: string) => void }> = [];
  let partial = "";
  const tap = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      partial += chunk.toString("utf8");
      const lines = partial.split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) {
        stdoutLines.push(line);
        for (const waiter of [...lineWaiters]) {
          if (waiter.match(line)) {
            lineWaiters.splice(lineWaiters.indexOf(waiter), 1);
            waiter.resolve(line);
          }
        }
      }
      done(null, chunk);
    },
  });
  child.stdout?.pipe(tap);

  const notifications: SessionNotification[] = [];
  const updateWaiters: Array<{
    sessionId: string;
    match: (u: SessionUpdate) => boolean;
    resolve: (u: SessionUpdate) => void;
  }> = [];
  const permissionRequests: Array<{ request: RequestPermissionRequest; choice: PermissionChoice }> = [];
  const pendingPermissions = new Map<string, Set<() => void>>();
  const elicitations: ReceivedElicitation[] = [];
  const completedElicitations: string[] = [];
  const fsCalls: string[] = [];
  const fsWrites: Array<{ path: string; content: string }> = [];
  const terminals = new TestTerminals();
  let permissionIndex = 0;

  const choose = (request: RequestPermissionRequest): PermissionChoice => {
    const script = options.permissions;
    if (typeof script === "function") return script(request);
    if (!script) return "allow_once";
    return script[permissionIndex++] ?? "reject";
  };

  const app = acpClient({ name: "crow-test-client" })
    .onNotification(methods.client.session.update, ({ params }) => {
      notifications.push(params);
      for (const waiter of [...updateWaiters]) {
        if (waiter.sessionId === params.sessionId && waiter.match(params.update)) {
          updateWaiters.splice(updateWaiters.indexOf(waiter), 1);
          waiter.resolve(params.update);
        }
      }
    })
    .onRequest(
      methods.client.session.requestPermission,
      async ({ params, signal }): Promise<RequestPermissionResponse> => {
        const choice = choose(params);
        permissionRequests.push({ request: params, choice });
        if (choice === "wait") {
          await new Promise<void>((resolve) => {
            const set = pendingPermissions.get(params.sessionId) ?? new Set();
            pendingPermissions.set(params.sessionId, set);
            const done = () => {
              set.delete(done);
              resolve();
            };
            set.add(done);
            signal.addEventListener("abort", done, { once: true });
          });
          return { outcome: { outcome: "cancelled" } };
        }
        if (choice === "cancelled") return { outcome: { outcome: "cancelled" } };
        const kind = choice === "reject" ? "reject_once" : choice;
        const option = params.options.find((o) => o.kind === kind);
        if (!option) throw new Error(`the agent offered no ${kind} option`);
        return { outcome: { outcome: "selected", optionId: option.optionId } };
      },
    );
  if (options.elicitation) {
    app
      .onRequest(methods.client.elicitation.create, async ({ params, signal }) => {
        const choice = options.elicit?.(params) ?? { action: "decline" };
        const received: ReceivedElicitation = { request: params, choice, withdrawn: false };
        elicitations.push(received);
        if (choice !== "wait") return choice;
        await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
        received.withdrawn = true;
        return { action: "cancel" };
      })
      .onNotification(methods.client.elicitation.complete, ({ params }) => {
        completedElicitations.push(params.elicitationId);
      });
  }
  if (options.fs) {
    app
      .onRequest(methods.client.fs.readTextFile, async ({ params }) => {
        fsCalls.push(`read ${params.path}`);
        let content = options.buffers?.get(params.path) ?? (await readFile(params.path, "utf8"));
        if (params.line || params.limit) {
          const start = Math.max(0, (params.line ?? 1) - 1);
          const lines = content.split("\n");
          content = lines.slice(start, params.limit ? start + params.limit : undefined).join("\n");
        }
        return { content };
      })
      .onRequest(methods.client.fs.writeTextFile, async ({ params }) => {
        fsCalls.push(`write ${params.path}`);
        fsWrites.push({ path: params.path, content: params.content });
        if (options.buffers?.has(params.path)) options.buffers.set(params.path, params.content);
        else await writeFile(params.path, params.content);
        return {};
      });
  }
  if (options.terminal) {
    app
      .onRequest(methods.client.terminal.create, ({ params }) => terminals.create(params))
      .onRequest(methods.client.terminal.output, ({ params }) => terminals.output(params))
      .onRequest(methods.client.terminal.waitForExit, ({ params }) => terminals.waitForExit(params))
      .onRequest(methods.client.terminal.kill, ({ params }) => terminals.kill(params))
      .onRequest(methods.client.terminal.release, ({ params }) => terminals.release(params));
  }

  // Ends quietly after close(); if the agent goes away before, pending requests reject saying why (exit, stderr).
  const stdio = new AgentStdio(
    child,
    () => stderr,
    () => closing,
  );
  const stream = ndJsonStream(stdio.input(), stdio.output(tap));
  const connection: ClientConnection = app.connect(stream);
  const agent = connection.agent;
  const initialize = await agent.request(methods.agent.initialize, {
    protocolVersion: PROTOCOL_VERSION,
    clientCapabilities: {
      fs: { readTextFile: !!options.fs, writeTextFile: !!options.fs },
      terminal: !!options.terminal,
      ...(options.session ? { session: options.session } : {}),
      ...(options.auth ? { auth: options.auth } : {}),
      ...(options.capabilitiesMeta ? { _meta: options.capabilitiesMeta } : {}),
      // Unstable (the stable type has no such key; the parser above keeps it).
      ...((options.subagents ? { subagents: {} } : {}) as object),
      ...(options.elicitation
        ? {
            elicitation: {
              ...(options.elicitation.form ? { form: {} } : {}),
              ...(options.elicitation.url ? { url: {} } : {}),
            },
          }
        : {}),
    },
    clientInfo: { name: "crow-test-client", version: "0.0.0" },
  });

  const updates = (sessionId: string) => notifications.filter((n) => n.sessionId === sessionId).map((n) => n.update);

  return {
    agent,
    process: child,
    initialize,
    notifications,
    permissionRequests,
    elicitations,
    completedElicitations,
    fsCalls,
    fsWrites,
    terminalCalls: terminals.calls,
    releasedTerminals: terminals.released,
    stdoutLines,
    stderr: () => stderr,
    updates,
    newSession: (cwd, mcpServers = []) => agent.request(methods.agent.session.new, { cwd, mcpServers }),
    async prompt(sessionId, prompt) {
      const start = notifications.length;
      const blocks: ContentBlock[] = typeof prompt === "string" ? [{ type: "text", text: prompt }] : prompt;
      const response = await agent.request(methods.agent.session.prompt, { sessionId, prompt: blocks });
      const during = notifications.slice(start).filter((n) => n.sessionId === sessionId);
      return { stopReason: response.stopReason, updates: during.map((n) => n.update) };
    },
    async cancel(sessionId) {
      await agent.notify(methods.agent.session.cancel, { sessionId });
      for (const answer of [...(pendingPermissions.get(sessionId) ?? [])]) answer();
    },
    waitForUpdate(sessionId, match, past = false) {
      if (past) {
        const found = updates(sessionId).find(match);
        if (found) return Promise.resolve(found);
      }
      return new Promise((resolve) => updateWaiters.push({ sessionId, match, resolve }));
    },
    writeRaw(line) {
      child.stdin?.write(`${line}\n`);
    },
    waitForLine(match) {
      return new Promise((resolve) => lineWaiters.push({ match, resolve }));
    },
    async close() {
      closing = true;
      terminals.killAll();
      child.stdin?.end();
      const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
      const code = await exited;
      clearTimeout(timer);
      connection.close();
      if (home) rmSync(home, { recursive: true, force: true });
      return code;
    },
  };
}
