import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { request as httpRequest } from "node:http";
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
  readonly process: ChildProcess;
  stderr(): string;
  /** Connects a new MCP client (a new MCP session, hence a new shell). */
  connect(options?: { token?: string }): Promise<McpConnection>;
  /** Sends SIGTERM and waits for the process to exit. */
  stop(): Promise<void>;
}

/** Spawns the built `crow-mcp --http --port 0` and waits until it prints its URL. */
export async function startHttp(options: SpawnOptions): Promise<HttpServerProcess> {
  const child = spawn(process.execPath, [CROW_MCP_BIN, "--http", "--port", "0", ...(options.args ?? [])], {
    cwd: options.cwd,
    env: childEnv(options.env),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  let stdout = "";
  child.stdout.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`crow-mcp --http did not start:\n${stderr}`)), 15_000);
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
      const match = /listening on (http:\/\/\S+)/.exec(stderr);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
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
    process: child,
    stderr: () => stderr,
    connect: async (connectOptions = {}) => {
      const client = await connectHttp(url, connectOptions.token);
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

/** crow-mcp's answer to one POST on its unix socket. */
export interface SocketAnswer {
  status: number;
  /** The `mcp-session-id` header (set by the answer to initialize). */
  sessionId: string | undefined;
  /** The body as text (JSON for a request answered without progress; empty for a notification). */
  text: string;
}

/**
 * One POST of a JSON-RPC message to /mcp on crow-mcp's unix socket (`crow-mcp --socket`), as raw HTTP: what the agent's
 * socket transport sends, without a client's own cold code. `cwd` goes in the `crow-cwd` header of an initialize.
 */
export function postOnSocket(
  socketPath: string,
  message: object,
  options: { sessionId?: string; cwd?: string } = {},
): Promise<SocketAnswer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        socketPath,
        method: "POST",
        path: "/mcp",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          ...(options.sessionId ? { "mcp-session-id": options.sessionId, "mcp-protocol-version": "2025-06-18" } : {}),
          ...(options.cwd ? { "crow-cwd": encodeURIComponent(options.cwd) } : {}),
        },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          text += chunk;
        });
        res.on("end", () => {
          const id = res.headers["mcp-session-id"];
          resolve({ status: res.statusCode ?? 0, sessionId: typeof id === "string" ? id : undefined, text });
        });
      },
    );
    req.on("error", reject);
    req.end(JSON.stringify(message));
  });
}
