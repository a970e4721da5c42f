/**
 * The `crow acp` child of `crow run`: the same installation (this Node binary and this package's dist/cli.js),
 * spoken to over ACP on its stdio. It runs in its own process group so a Ctrl-C at the terminal reaches only
 * `crow run`, which turns it into `session/cancel`. Its stderr is kept (the tail is shown if it dies) and passed
 * through live when CROW_LOG asks for logs.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import {
  type ClientConnection,
  type ClientContext,
  client,
  methods,
  ndJsonStream,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
  type SessionNotification,
} from "@agentclientprotocol/sdk";
import { ownPackageRoot, packageBin } from "../package-paths.js";

/** This installation's `crow` executable, as its package.json declares it (the bundle), whatever the package's name. */
export function crowCliPath(): string {
  return packageBin(ownPackageRoot(fileURLToPath(import.meta.url)), "crow", "crow");
}

const STDERR_TAIL = 8 * 1024;

/** The agent process ended while `crow run` still needed it. */
export class AgentExitedError extends Error {
  constructor(
    readonly code: number | null,
    readonly signal: NodeJS.Signals | null,
    readonly stderr: string,
  ) {
    const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
    const tail = stderr.trim() ? `:\n${stderr.trim()}` : "";
    super(`the agent (crow acp) ${how}${tail}`);
  }
}

export interface AgentHandlers {
  onUpdate(notification: SessionNotification): void;
  requestPermission(request: RequestPermissionRequest, signal: AbortSignal): Promise<RequestPermissionResponse>;
}

export interface AgentProcess {
  readonly agent: ClientContext;
  readonly connection: ClientConnection;
  readonly child: ChildProcess;
  /** Rejects with `AgentExitedError` when the child exits (never resolves). */
  readonly died: Promise<never>;
  /** Races a request against the child's death, so a crash never leaves `crow run` waiting. */
  guard<T>(request: Promise<T>): Promise<T>;
  /** Closes stdin and waits for the agent to stop its tools and exit (SIGTERM after `graceMs`). */
  close(graceMs?: number): Promise<void>;
  /** Ends the child at once (second Ctrl-C). */
  kill(): void;
}

export function startAgent(handlers: AgentHandlers, env: NodeJS.ProcessEnv = process.env): AgentProcess {
  const child = spawn(process.execPath, [crowCliPath(), "acp"], {
    env,
    stdio: ["pipe", "pipe", "pipe"],
    detached: true,
  });
  let stderr = "";
  const passThrough = Boolean(env.CROW_LOG);
  child.stderr?.setEncoding("utf8");
  child.stderr?.on("data", (text: string) => {
    stderr = (stderr + text).slice(-STDERR_TAIL);
    if (passThrough) process.stderr.write(text);
  });
  let exited = false;
  const died = new Promise<never>((_, reject) => {
    child.once("error", (error) => reject(new AgentExitedError(null, null, `${stderr}${error.message}`)));
    child.once("exit", (code, signal) => {
      exited = true;
      // Let the last stderr bytes arrive before reporting.
      setTimeout(() => reject(new AgentExitedError(code, signal, stderr)), 50);
    });
  });
  died.catch(() => {});

  const app = client({ name: "crow-run" })
    .onNotification(methods.client.session.update, ({ params }) => handlers.onUpdate(params))
    .onRequest(methods.client.session.requestPermission, ({ params, signal }) =>
      handlers.requestPermission(params, signal),
    );
  const stream = ndJsonStream(
    Writable.toWeb(child.stdin as Writable) as WritableStream<Uint8Array>,
    Readable.toWeb(child.stdout as Readable) as ReadableStream<Uint8Array>,
  );
  const connection = app.connect(stream);
  // Writes to a dead child's stdin fail with EPIPE; the exit is reported through `died`.
  child.stdin?.on("error", () => {});

  return {
    agent: connection.agent,
    connection,
    child,
    died,
    async guard(request) {
      try {
        return await Promise.race([request, died]);
      } catch (error) {
        // A dying child closes the connection first: report the exit (with its stderr) rather than "closed".
        if (!(error instanceof AgentExitedError) && (connection.signal.aborted || exited)) {
          await Promise.race([died, new Promise((resolve) => setTimeout(resolve, 2000).unref())]);
        }
        throw error;
      }
    },
    async close(graceMs = 5000) {
      if (exited) return;
      const gone = new Promise<void>((resolve) => child.once("exit", () => resolve()));
      child.stdin?.end();
      const timer = setTimeout(() => child.kill("SIGTERM"), graceMs);
      await gone;
      clearTimeout(timer);
      connection.close();
    },
    kill() {
      if (!exited) child.kill("SIGTERM");
    },
  };
}
