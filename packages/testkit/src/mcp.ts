import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { CROW_MCP_BIN } from "./paths.js";

/** An MCP client connected to a crow-mcp process. */
export interface McpConnection {
  readonly client: Client;
  /** Everything the server wrote to stderr so far. */
  stderr(): string;
  /** PID of the crow-mcp process (stdio) or of the HTTP server process. */
  readonly pid: number | undefined;
  /** Disconnects and waits for the process to exit. */
  close(): Promise<void>;
}

/** Options for spawning crow-mcp. */
export interface SpawnOptions {
  /** Working directory of the server (its tools' cwd). */
  cwd: string;
  /** Extra command-line arguments. */
  args?: string[];
  /** Extra environment variables (added to the parent's). */
  env?: Record<string, string>;
  /** Run the server as this uid/gid (only works when the tests run as root). */
  uid?: number;
  gid?: number;
}

let serverHome: string | undefined;

/** One temp HOME for the servers this test process starts, removed when it exits. */
function temporaryHome(): string {
  if (serverHome === undefined) {
    const dir = mkdtempSync(path.join(tmpdir(), "crow-mcp-home-"));
    process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
    serverHome = dir;
  }
  return serverHome;
}

/**
 * The server's environment: this process's, HOME replaced by a temp directory (its shells write ~/.bash_history,
 * `python3 -i` writes ~/.python_history: tests never touch the real HOME), then `extra`.
 */
function childEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined) env[key] = value;
  return { ...env, HOME: temporaryHome(), ...extra };
}

/** Spawns the built crow-mcp on stdio and connects the official MCP SDK client to it. */
export async function connectStdio(options: SpawnOptions): Promise<McpConnection> {
  let stderr = "";
  const transport =
    options.uid === undefined
      ? new StdioClientTransport({
          command: process.execPath,
          args: [CROW_MCP_BIN, ...(options.args ?? [])],
          cwd: options.cwd,
          env: childEnv(options.env),
          stderr: "pipe",
        })
      : new StdioClientTransport({
          // The SDK's stdio transport cannot set uid/gid, so drop privileges with setpriv.
          command: "setpriv",
          args: [
            `--reuid=${options.uid}`,
            `--regid=${options.gid ?? options.uid}`,
            "--clear-groups",
            process.execPath,
            CROW_MCP_BIN,
            ...(options.args ?? []),
          ],
          cwd: options.cwd,
          env: childEnv(options.env),
          stderr: "pipe",
        });
  transport.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const client = new Client({ name: "crow-testkit", version: "0.0.0" });
  await client.connect(transport);
  return {
    client,
    stderr: () => stderr,
    pid: transport.pid ?? undefined,
    close: () => client.close(),
  };
}

/** A crow-mcp process serving Streamable HTTP. */
export interface HttpServerProcess {
  /** The MCP endpoint URL the server printed. */
  readonly url: string;
  /** The bearer token the server requires (the one it printed, or the one it was given); undefined with --no-auth. */
  readonly token: string | undefined;
  readonly process: ChildProcess;
  stderr(): string;
  /**
   * Connects a new MCP client (a new MCP session, hence a new shell), with the server's token unless `token` names
   * another (`null`: send none).
   */
  connect(options?: { token?: string | null }): Promise<McpConnection>;
  /** Sends SIGTERM and waits for the process to exit. */
  stop(): Promise<void>;
}

/**
 * Spawns the built `crow-mcp --http --port 0` and waits until it prints its URL (and, when it generated its token,
 * the token line that follows).
 */
export async function startHttp(options: SpawnOptions): Promise<HttpServerProcess> {
  const env = childEnv(options.env);
  const child = spawn(process.execPath, [CROW_MCP_BIN, "--http", "--port", "0", ...(options.args ?? [])], {
    cwd: options.cwd,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  let stdout = "";
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  const args = options.args ?? [];
  const flag = args.indexOf("--token");
  const fileFlag = args.indexOf("--token-file");
  const tokenFile = fileFlag >= 0 ? args[fileFlag + 1] : undefined;
  const givenToken =
    flag >= 0
      ? args[flag + 1]
      : tokenFile !== undefined
        ? readFileSync(tokenFile, "utf8").split("\n")[0]?.trim()
        : env.CROW_MCP_TOKEN || undefined;
  const expectsPrintedToken = givenToken === undefined && !args.includes("--no-auth");
  const { url, token } = await new Promise<{ url: string; token: string | undefined }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`crow-mcp --http did not start:\n${stderr}`)), 15_000);
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(stderr);
      const printed = /token \(send [^)]*\): (\S+)/.exec(stderr)?.[1];
      if (match?.[1] && (!expectsPrintedToken || printed)) {
        clearTimeout(timer);
        resolve({ url: match[1], token: printed ?? givenToken });
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`crow-mcp --http exited with ${code}:\n${stderr}${stdout}`));
    });
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    url,
    token,
    process: child,
    stderr: () => stderr,
    connect: async (connectOptions = {}) => {
      const chosen = connectOptions.token === undefined ? token : (connectOptions.token ?? undefined);
      const client = await connectHttp(url, chosen);
      return { client, stderr: () => stderr, pid: child.pid, close: () => client.close() };
    },
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}

/** Connects the MCP SDK client to a Streamable HTTP endpoint, optionally with a bearer token. */
export async function connectHttp(url: string, token?: string): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(
    new URL(url),
    token ? { requestInit: { headers: { Authorization: `Bearer ${token}` } } } : undefined,
  );
  const client = new Client({ name: "crow-testkit", version: "0.0.0" });
  await client.connect(transport);
  return client;
}

/** The concatenated text blocks of a tool result. */
export function textOf(result: unknown): string {
  const content = (result as CallToolResult).content ?? [];
  return content
    .filter((block): block is { type: "text"; text: string } => block.type === "text")
    .map((block) => block.text)
    .join("\n");
}

/** Calls a tool and returns the typed result (tool failures come back as `isError: true`, not exceptions). */
export async function callTool(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<CallToolResult & { text: string }> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  return { ...result, text: textOf(result) };
}

/** A JSON-RPC answer as it came over crow-mcp's unix socket. */
export interface SocketAnswer {
  id?: unknown;
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
}

/** A raw connection to crow-mcp's unix socket (`crow-mcp --socket`): one MCP session, one message per line. */
export interface SocketSession {
  /** Sends a request and resolves with its answer (notifications that come first are skipped). */
  request(message: { id: number } & Record<string, unknown>): Promise<SocketAnswer>;
  /** Sends a notification. */
  notify(message: Record<string, unknown>): void;
  /** Resolves once crow-mcp has closed the connection. */
  readonly closed: Promise<void>;
  close(): void;
}

/**
 * Connects to crow-mcp's unix socket as raw lines: what the agent's socket transport sends, without a client's own
 * cold code. The first request must be an initialize ({@link socketInitialize}).
 */
export function connectSocket(socketPath: string): Promise<SocketSession> {
  return new Promise((resolve, reject) => {
    const socket = connect(socketPath);
    const waiting = new Map<unknown, (answer: SocketAnswer) => void>();
    let buffer = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      buffer += chunk;
      for (let end = buffer.indexOf("\n"); end >= 0; end = buffer.indexOf("\n")) {
        const answer = JSON.parse(buffer.slice(0, end)) as SocketAnswer;
        buffer = buffer.slice(end + 1);
        waiting.get(answer.id)?.(answer);
        waiting.delete(answer.id);
      }
    });
    const closed = new Promise<void>((done) => socket.once("close", () => done()));
    socket.once("error", reject);
    socket.once("connect", () =>
      resolve({
        request: (message) =>
          new Promise((answered, failed) => {
            waiting.set(message.id, answered);
            socket.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`);
            void closed.then(() => failed(new Error(`crow-mcp closed the connection before answering ${message.id}`)));
          }),
        notify: (message) => socket.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`),
        closed,
        close: () => socket.end(),
      }),
    );
  });
}

/** An `initialize` request (id 1) that opens its session in `cwd` when given (crow-mcp's `_meta["crow/cwd"]`). */
export function socketInitialize(cwd?: string): { id: number } & Record<string, unknown> {
  return {
    id: 1,
    method: "initialize",
    params: {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "crow test", version: "0" },
      ...(cwd ? { _meta: { "crow/cwd": cwd } } : {}),
    },
  };
}
