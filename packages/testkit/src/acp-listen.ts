/**
 * `crow acp --listen` under test: the built agent spawned on a free loopback port, and ACP clients connected to it
 * over WebSocket or Streamable HTTP with the SDK's experimental clients (the transport an editor would use).
 *
 *   const server = await startListeningAgent({ llmUrl: mock.url, env: { CROW_HOME: home, HOME: home } });
 *   const a = await connectRemote(server, "ws", { permissions: () => "allow_once" });
 *   const { sessionId } = await a.newSession(ws.dir);
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import {
  type ClientConnection,
  type ClientContext,
  client,
  type InitializeResponse,
  methods,
  type NewSessionResponse,
  PROTOCOL_VERSION,
  type RequestPermissionRequest,
  type SessionNotification,
  type SessionUpdate,
  type StopReason,
  type Stream,
} from "@agentclientprotocol/sdk";
import { createHttpStream } from "@agentclientprotocol/sdk/experimental/http-client";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";
import { WebSocket } from "ws";
import type { PermissionChoice } from "./acp-client.js";
import { CROW_BIN } from "./paths.js";

export interface ListeningAgent {
  /** `http://127.0.0.1:<port>/acp`. */
  readonly url: string;
  readonly token: string;
  readonly process: ChildProcess;
  stderr(): string;
  /** Resolves with the first stderr text (so far or from now on) matching: the agent's own readiness signals. */
  waitForStderr(match: RegExp): Promise<string>;
  /** SIGTERM, then waits for the exit; returns the exit code. */
  close(): Promise<number | null>;
}

export interface ListenOptions {
  llmUrl: string;
  /** Environment over this process's (HOME and CROW_HOME should be a test's own). */
  env?: Record<string, string>;
  /** Extra arguments after `acp --listen 127.0.0.1:0`. */
  args?: string[];
  /** The token given through CROW_ACP_TOKEN (default: a random one); `null` lets the agent make one up. */
  token?: string | null;
}

/** Spawns `crow acp --listen 127.0.0.1:0` and resolves once it says where it listens. */
export async function startListeningAgent(options: ListenOptions): Promise<ListeningAgent> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined) env[key] = value;
  for (const key of ["OPENAI_API_KEY", "CROW_MODELS", "CROW_ACP_TOKEN"]) delete env[key];
  Object.assign(env, { OPENAI_BASE_URL: options.llmUrl, CROW_MODEL: "mock-model", CROW_MAX_RETRIES: "0" });
  // 32 characters: the shortest token `crow acp --listen` serves with.
  const given = options.token === undefined ? randomBytes(16).toString("hex") : options.token;
  if (given !== null) env.CROW_ACP_TOKEN = given;
  Object.assign(env, options.env);
  const child = spawn(process.execPath, [CROW_BIN, "acp", "--listen", "127.0.0.1:0", ...(options.args ?? [])], {
    env,
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  const stderrWaiters = new Set<() => void>();
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const ready = new Promise<{ url: string; token: string }>((resolve, reject) => {
    child.stderr?.setEncoding("utf8");
    child.stderr?.on("data", (text: string) => {
      stderr += text;
      for (const wake of [...stderrWaiters]) wake();
      const url = /listening on (http:\/\/\S+)/.exec(stderr)?.[1];
      const token = given ?? /token \(.*\): (\S+)/.exec(stderr)?.[1];
      if (url && token) resolve({ url, token });
    });
    void exited.then((code) => reject(new Error(`crow acp --listen exited (${code}) before listening:\n${stderr}`)));
  });
  const { url, token } = await ready;
  return {
    url,
    token,
    process: child,
    stderr: () => stderr,
    waitForStderr(match) {
      return new Promise((resolve) => {
        const look = () => {
          const found = match.exec(stderr)?.[0];
          if (found === undefined) return false;
          stderrWaiters.delete(wake);
          resolve(found);
          return true;
        };
        const wake = () => void look();
        if (!look()) stderrWaiters.add(wake);
      });
    },
    async close() {
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

export type RemoteKind = "ws" | "http";

/** An ACP stream to `url` over `kind` with these headers (the token: `Authorization: Bearer …`). */
export function remoteAcpStream(url: string, kind: RemoteKind, headers: Record<string, string>): Stream {
  return kind === "ws"
    ? createWebSocketStream(url.replace(/^http/, "ws"), { headers, WebSocket })
    : createHttpStream(url, { headers });
}

export interface RemoteClientOptions {
  /** How permission requests are answered (default allow_once); `wait` answers only when cancelled. */
  permissions?: (request: RequestPermissionRequest) => PermissionChoice;
  /** Serve `fs/read_text_file` from the disk (and advertise it). */
  fs?: boolean;
  /** Headers instead of the server's token (attack tests). */
  headers?: Record<string, string>;
}

export interface RemoteClient {
  readonly agent: ClientContext;
  readonly connection: ClientConnection;
  readonly initialize: InitializeResponse;
  readonly notifications: readonly SessionNotification[];
  readonly permissionRequests: readonly RequestPermissionRequest[];
  readonly fsReads: readonly string[];
  updates(sessionId: string): SessionUpdate[];
  newSession(cwd: string): Promise<NewSessionResponse>;
  prompt(sessionId: string, text: string): Promise<{ stopReason: StopReason; updates: SessionUpdate[] }>;
  /** Sends session/cancel and answers the session's waiting permission requests with `cancelled`. */
  cancel(sessionId: string): Promise<void>;
  /** The first update of the session matching (already received, or from now on). */
  waitForUpdate(sessionId: string, match: (update: SessionUpdate) => boolean): Promise<SessionUpdate>;
  /** Resolves with the next permission request (or the first one not yet waited for). */
  nextPermission(): Promise<RequestPermissionRequest>;
  close(): Promise<void>;
}

/** Connects to `server` over `kind` and sends initialize. */
export async function connectRemote(
  server: Pick<ListeningAgent, "url" | "token">,
  kind: RemoteKind,
  options: RemoteClientOptions = {},
): Promise<RemoteClient> {
  const notifications: SessionNotification[] = [];
  const permissionRequests: RequestPermissionRequest[] = [];
  const fsReads: string[] = [];
  const waiting = new Map<string, Set<() => void>>();
  const updateWaiters = new Set<() => void>();
  let permissionsSeen = 0;
  const permissionWaiters = new Set<() => void>();
  const app = client({ name: "crow-remote-test" })
    .onNotification(methods.client.session.update, ({ params }) => {
      notifications.push(params);
      for (const wake of [...updateWaiters]) wake();
    })
    .onRequest(methods.client.session.requestPermission, async ({ params, signal }) => {
      permissionRequests.push(params);
      for (const wake of [...permissionWaiters]) wake();
      const choice = options.permissions?.(params) ?? "allow_once";
      if (choice === "wait") {
        await new Promise<void>((resolve) => {
          const set = waiting.get(params.sessionId) ?? new Set();
          waiting.set(params.sessionId, set);
          set.add(resolve);
          signal.addEventListener("abort", () => resolve(), { once: true });
        });
        return { outcome: { outcome: "cancelled" } };
      }
      if (choice === "cancelled") return { outcome: { outcome: "cancelled" } };
      const kindWanted = choice === "reject" ? "reject_once" : choice;
      const option = params.options.find((o) => o.kind === kindWanted);
      if (!option) throw new Error(`the agent offered no ${kindWanted} option`);
      return { outcome: { outcome: "selected", optionId: option.optionId } };
    });
  if (options.fs) {
    app.onRequest(methods.client.fs.readTextFile, async ({ params }) => {
      fsReads.push(params.path);
      return { content: await readFile(params.path, "utf8") };
    });
  }
  const headers = options.headers ?? { Authorization: `Bearer ${server.token}` };
  const connection = app.connect(remoteAcpStream(server.url, kind, headers));
  const agent = connection.agent;
  const initialize = await agent.request(methods.agent.initialize, {
    protocolVersion: PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: !!options.fs, writeTextFile: false }, terminal: false },
    clientInfo: { name: "crow-remote-test", version: "0.0.0" },
  });
  const updates = (sessionId: string) => notifications.filter((n) => n.sessionId === sessionId).map((n) => n.update);
  return {
    agent,
    connection,
    initialize,
    notifications,
    permissionRequests,
    fsReads,
    updates,
    newSession: (cwd) => agent.request(methods.agent.session.new, { cwd, mcpServers: [] }),
    async prompt(sessionId, text) {
      const start = notifications.length;
      const response = await agent.request(methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text }],
      });
      const during = notifications.slice(start).filter((n) => n.sessionId === sessionId);
      return { stopReason: response.stopReason, updates: during.map((n) => n.update) };
    },
    async cancel(sessionId) {
      await agent.notify(methods.agent.session.cancel, { sessionId });
      for (const answer of [...(waiting.get(sessionId) ?? [])]) answer();
    },
    waitForUpdate(sessionId, match) {
      return new Promise((resolve) => {
        const look = () => {
          const found = updates(sessionId).find(match);
          if (!found) return false;
          updateWaiters.delete(wake);
          resolve(found);
          return true;
        };
        const wake = () => void look();
        if (!look()) updateWaiters.add(wake);
      });
    },
    nextPermission() {
      return new Promise((resolve) => {
        const look = () => {
          const request = permissionRequests[permissionsSeen];
          if (!request) return false;
          permissionsSeen++;
          permissionWaiters.delete(wake);
          resolve(request);
          return true;
        };
        const wake = () => void look();
        if (!look()) permissionWaiters.add(wake);
      });
    },
    async close() {
      connection.close();
      await connection.closed.catch(() => {});
    },
  };
}
