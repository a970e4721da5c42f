/**
 * The agent of `crow run`: the very ACP agent `crow acp` serves (acp/agent.ts), hosted in this process and spoken to
 * over ACP through a pair of in-memory NDJSON streams. ACP stays the boundary (one agent code path, messages are
 * serialized as on stdio); what goes away is a second Node process, its startup and its memory. The agent's log lines
 * (and any console output of extensions) never reach the terminal's stdout: the tail is kept for error messages and
 * they pass through to stderr when CROW_LOG asks for logs.
 */
import {
  type ClientConnection,
  type ClientContext,
  type CreateElicitationRequest,
  type CreateElicitationResponse,
  client,
  methods,
  ndJsonStream,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
  type SessionNotification,
} from "@agentclientprotocol/sdk";
import { errorText } from "@crow/core";
import { logRequested, routeLog } from "../base/log.js";
import { type AgentConfig, ConfigError } from "../config/index.js";
import { useConfigEnvironment } from "../tools/child-env.js";
import { startSandboxCheck } from "../tools/sandbox.js";
import { startSharedToolserver, stopSharedToolserver } from "../tools/shared.js";

const LOG_TAIL = 8 * 1024;

/** The agent stopped (or could not start) while `crow run` still needed it. */
export class AgentExitedError extends Error {
  constructor(
    message: string,
    /** What the agent said: its last log lines, or the configuration error it refused to start with. */
    readonly stderr: string,
    /** The exit code the failure calls for: 2 for a configuration the agent refused, else null. */
    readonly code: number | null = null,
  ) {
    const tail = stderr.trim() ? `\n${stderr.trim()}` : "";
    super(`${message}${tail}`);
  }
}

export interface AgentHandlers {
  onUpdate(notification: SessionNotification): void;
  requestPermission(request: RequestPermissionRequest, signal: AbortSignal): Promise<RequestPermissionResponse>;
  /** A question to the user (asked only when `crow run` advertised it can show them). */
  elicit(request: CreateElicitationRequest, signal: AbortSignal): Promise<CreateElicitationResponse>;
  /** A URL question is done on the server's side. */
  elicitationComplete(elicitationId: string): void;
}

export interface AgentProcess {
  readonly agent: ClientContext;
  readonly connection: ClientConnection;
  /** Rejects with `AgentExitedError` when the agent cannot start or stops (never resolves). */
  readonly died: Promise<never>;
  /** Races a request against the agent's failure, so a broken agent never leaves `crow run` waiting. */
  guard<T>(request: Promise<T>): Promise<T>;
  /** Ends the connection and waits for the agent to close its sessions and stop their tools. */
  close(graceMs?: number): Promise<void>;
  /** Stops the tools at once (second Ctrl-C; the process exits right after). */
  kill(): void;
}

/** The client side of `crow run`: what it answers, whichever agent it talks to (in this process or remote). */
export function clientApp(handlers: AgentHandlers) {
  return client({ name: "crow-run" })
    .onNotification(methods.client.session.update, ({ params }) => handlers.onUpdate(params))
    .onRequest(methods.client.session.requestPermission, ({ params, signal }) =>
      handlers.requestPermission(params, signal),
    )
    .onRequest(methods.client.elicitation.create, ({ params, signal }) => handlers.elicit(params, signal))
    .onNotification(methods.client.elicitation.complete, ({ params }) =>
      handlers.elicitationComplete(params.elicitationId),
    );
}

/** A byte pipe: what is written to `writable` comes out of `readable`. */
function pipe(): { writable: WritableStream<Uint8Array>; readable: ReadableStream<Uint8Array> } {
  return new TransformStream<Uint8Array, Uint8Array>();
}

/**
 * Starts the agent in this process with `config` (loaded and checked by the caller from `env`) and connects to it.
 */
export function startAgent(
  handlers: AgentHandlers,
  config: AgentConfig,
  env: NodeJS.ProcessEnv = process.env,
): AgentProcess {
  let logTail = "";
  const passThrough = logRequested(env);
  const keep = (text: string) => {
    logTail = (logTail + text).slice(-LOG_TAIL);
    if (passThrough) process.stderr.write(text);
  };
  routeLog(keep);
  // Extensions run in this process now: their console output is the agent's log, never the answer on stdout.
  const toLog = (...args: unknown[]) => keep(`${args.map((a) => (typeof a === "string" ? a : String(a))).join(" ")}\n`);
  console.log = toLog;
  console.info = toLog;
  console.debug = toLog;
  console.warn = toLog;
  console.error = toLog;

  const toAgent = pipe();
  const toClient = pipe();
  let fail: (error: AgentExitedError) => void = () => {};
  let failed = false;
  const died = new Promise<never>((_, reject) => {
    fail = (error) => {
      failed = true;
      reject(error);
    };
  });
  died.catch(() => {});

  /** Resolves with the agent's close() once it runs (undefined when it could not start). */
  let started: (close: (() => Promise<void>) | undefined) => void = () => {};
  const running = new Promise<(() => Promise<void>) | undefined>((resolve) => {
    started = resolve;
  });
  void (async () => {
    try {
      // What child processes may see (no keys, no .env but what crow-mcp reads), as under `crow acp`.
      useConfigEnvironment(config);
      // The toolserver boots while the agent's modules load (the head start `crow acp` gives its first session).
      startSharedToolserver();
      startSandboxCheck(config.sandbox);
      const { createAgent } = await import("../acp/agent.js");
      const hosted = createAgent({ config });
      hosted.app.connect(ndJsonStream(toClient.writable, toAgent.readable));
      started(hosted.close);
    } catch (error) {
      started(undefined);
      if (error instanceof ConfigError) fail(new AgentExitedError("the agent could not start:", error.message, 2));
      else fail(new AgentExitedError(`the agent could not start: ${errorText(error)}`, logTail));
    }
  })();

  const connection = clientApp(handlers).connect(ndJsonStream(toAgent.writable, toClient.readable));

  return {
    agent: connection.agent,
    connection,
    died,
    async guard(request) {
      return await Promise.race([request, died]);
    },
    async close(graceMs = 5000) {
      connection.close();
      if (failed) return;
      // Every session closes and stops its tools (its shell in the shared crow-mcp), as when `crow acp` ends.
      const closing = running.then((closeAgent) => closeAgent?.());
      await Promise.race([closing, new Promise((resolve) => setTimeout(resolve, graceMs).unref())]);
    },
    kill() {
      void stopSharedToolserver();
    },
  };
}
