import path from "node:path";
import { findTool, type ToolCallRequest, type ToolDefinition, type ToolProgress, type ToolResult } from "@crow/core";
import { diffFromMeta } from "@crow/mcp/edit";
import { checkReadable, checkWritable, SANDBOX_META_KEY, UNSANDBOXED_META_KEY } from "@crow/mcp/sandbox";
import { clientEdit } from "./client-edit.js";
import { clientRead, clientWrite } from "./client-fs.js";
import { clientTerminal } from "./client-terminal.js";
import { CallFailure, ServerConnection } from "./connection.js";
import { fromMcpResult, resultText } from "./content.js";
import { filePathArg, locationsFor } from "./data.js";
import { firstChangedLine } from "./diff.js";
import { BUILTIN_SERVER, collectServers } from "./servers.js";
import type { ServerStatus, ToolCallData, ToolRouter, ToolRouterOptions } from "./types.js";

/** Default per-call MCP timeout; progress notifications (terminal output) reset it. */
const DEFAULT_CALL_TIMEOUT_MS = 10 * 60_000;
/** Grace beyond a terminal call's own `timeout` before the MCP request itself times out. */
const TIMEOUT_GRACE_MS = 60_000;
const DEFAULT_CLIENT_TERMINAL_TIMEOUT_SECONDS = 120;

interface Route {
  connection: ServerConnection;
  /** The tool's name on its server. */
  tool: string;
  /** The server's `readOnlyHint` annotation, when it gave one. */
  readOnly: boolean | undefined;
}

type ExecuteContext = { signal: AbortSignal; onProgress: (progress: ToolProgress) => void };

/**
 * Connects every server of a session in parallel and returns the router once all have connected or failed (a failed
 * server is reported by `failures()`; the others work). Never rejects for a server failure.
 */
export async function createToolRouter(options: ToolRouterOptions): Promise<ToolRouter> {
  const router = new Router(options);
  await router.start();
  return router;
}

class Router implements ToolRouter {
  private readonly connections: ServerConnection[];
  private routes = new Map<string, Route>();
  private defs: ToolDefinition[] = [];
  private stale = true;
  private closed = false;

  constructor(private readonly options: ToolRouterOptions) {
    const specs = collectServers({
      cwd: options.cwd,
      builtin: options.builtin ?? true,
      ...(options.configServers ? { configServers: options.configServers } : {}),
      ...(options.mcpServers ? { mcpServers: options.mcpServers } : {}),
    });
    const changed = () => {
      this.stale = true;
    };
    const sandbox = options.sandbox;
    const meta = sandbox ? () => ({ [SANDBOX_META_KEY]: sandbox() }) : undefined;
    this.connections = specs.map(
      (spec) =>
        new ServerConnection(
          spec,
          changed,
          options.onServerStderr,
          spec.name === BUILTIN_SERVER ? meta : undefined,
          options.user,
        ),
    );
  }

  async start(): Promise<void> {
    await Promise.all(this.connections.map((c) => c.connect()));
    this.stale = true;
  }

  /**
   * Rebuilds the name table: every connected server's tools, in server order; a name offered by several servers is
   * prefixed with `<server>_` on each of them, other names stay as the server gave them.
   */
  private build(): void {
    if (!this.stale) return;
    this.stale = false;
    const counts = new Map<string, number>();
    for (const c of this.connections) for (const t of c.tools) counts.set(t.name, (counts.get(t.name) ?? 0) + 1);
    this.routes = new Map();
    this.defs = [];
    for (const connection of this.connections) {
      for (const tool of connection.tools) {
        const name = (counts.get(tool.name) ?? 0) > 1 ? `${connection.name}_${tool.name}` : tool.name;
        if (this.routes.has(name)) continue;
        this.routes.set(name, { connection, tool: tool.name, readOnly: tool.annotations?.readOnlyHint });
        const { $schema: _schema, ...parameters } = tool.inputSchema as Record<string, unknown>;
        this.defs.push({
          type: "function",
          function: { name, description: tool.description ?? tool.title ?? "", parameters },
        });
      }
    }
  }

  definitions(): ToolDefinition[] {
    this.build();
    return this.defs;
  }

  /** The server's own read-only claim (MCP `readOnlyHint`): the permission modes let such tools of kind "other" run. */
  isReadOnly(name: string): boolean | undefined {
    this.build();
    return this.routes.get(name)?.readOnly;
  }

  servers(): ServerStatus[] {
    this.build();
    return this.connections.map((c) => ({
      name: c.name,
      transport: c.spec.transport === "invalid" ? "stdio" : c.spec.transport === "shared" ? "socket" : c.spec.transport,
      state: c.state === "failed" ? "failed" : c.state === "connected" || c.state === "lost" ? "connected" : "closed",
      ...(c.error !== undefined && c.state === "failed" ? { error: c.error } : {}),
      ...(c.pid !== undefined ? { pid: c.pid } : {}),
      tools: [...this.routes].filter(([, r]) => r.connection === c).map(([name]) => name),
    }));
  }

  failures(): string[] {
    return [
      ...(this.options.sandboxNotice ? [this.options.sandboxNotice] : []),
      ...this.connections
        .filter((c) => c.state === "failed")
        .map((c) => `MCP server "${c.name}" failed to start: ${c.error ?? "unknown error"}`),
    ];
  }

  isConfined(name: string): boolean {
    const route = this.resolve({ id: "", name, tool: name, args: {} });
    if (!route || route.connection.name !== BUILTIN_SERVER || route.tool !== "terminal") return false;
    // The editor's terminal runs commands its own way: not confined by Crow.
    if (this.options.client?.createTerminal) return false;
    return (this.options.sandbox?.().mode ?? "off") !== "off";
  }

  private resolve(call: ToolCallRequest): Route | undefined {
    this.build();
    const direct = this.routes.get(call.tool) ?? this.routes.get(call.name);
    if (direct) return direct;
    const found = findTool(this.defs, call.name);
    return found ? this.routes.get(found.function.name) : undefined;
  }

  async execute(call: ToolCallRequest, context: ExecuteContext): Promise<ToolResult> {
    if (this.closed) return { content: "Error: the session's tools are closed.", isError: true };
    const route = this.resolve(call);
    if (!route) {
      const names = this.defs.map((d) => d.function.name).join(", ");
      return { content: `Error: unknown tool "${call.name}". Available tools: ${names || "none"}.`, isError: true };
    }
    const client = this.options.client;
    if (client && route.connection.name === BUILTIN_SERVER) {
      // Writes through the editor's buffers get the sandbox's writable roots too (crow-mcp checks its own).
      const blocked = this.outsideWritableRoots(route.tool, call.args);
      if (blocked) return { content: blocked, isError: true, data: { via: BUILTIN_SERVER } };
      const cwd = this.options.cwd;
      let routed: ToolResult | undefined;
      if (route.tool === "read" && client.readTextFile) {
        routed = await clientRead(client, call.args, this.options.sandbox?.());
      } else if (route.tool === "write" && client.writeTextFile) routed = await clientWrite(client, call.args);
      else if (route.tool === "edit" && client.readTextFile && client.writeTextFile) {
        return clientEdit(client, call.args, () => this.callMcp(route, call.args, context));
      } else if (route.tool === "terminal" && client.createTerminal) {
        routed = await clientTerminal(client.createTerminal.bind(client), call.args, {
          cwd,
          signal: context.signal,
          onProgress: context.onProgress,
          defaultTimeoutSeconds: this.options.clientTerminalTimeoutSeconds ?? DEFAULT_CLIENT_TERMINAL_TIMEOUT_SECONDS,
        });
      }
      if (routed) return routed;
    }
    return this.callMcp(route, call.args, context, call);
  }

  /** The sandbox's refusal of a write or edit through the editor (outside the writable roots, a hidden file), if any. */
  private outsideWritableRoots(tool: string, args: Record<string, unknown>): string | undefined {
    if ((tool !== "write" && tool !== "edit") || !this.options.sandbox) return undefined;
    const file = filePathArg(args);
    if (file === undefined || !path.isAbsolute(file)) return undefined;
    const policy = this.options.sandbox();
    // An edit reads the buffer too: a hidden file (Crow's provider keys) says so rather than "not writable".
    return (tool === "edit" ? checkReadable(file, policy) : undefined) ?? checkWritable(file, policy);
  }

  /**
   * Runs a call on its MCP server; file tools get locations, and a write or edit shows the diff its server returned
   * (crow-mcp's `_meta["crow/diff"]`: the agent reads no file, so a remote toolserver's change shows as well).
   */
  private async callMcp(
    route: Route,
    args: Record<string, unknown>,
    context: ExecuteContext,
    call?: ToolCallRequest,
  ): Promise<ToolResult> {
    const { connection, tool } = route;
    let result: ToolResult;
    let meta: unknown;
    try {
      const options = {
        signal: context.signal,
        timeoutMs: this.timeoutFor(args),
        onProgress: (p: ToolProgress) => context.onProgress(p),
        ...(call ? { callId: call.id } : {}),
      };
      let raw = await connection.call(tool, args, options);
      const askEscape = this.options.sandboxEscape;
      if (askEscape && call && connection.name === BUILTIN_SERVER && raw.structuredContent?.sandbox_blocked === true) {
        const blocked = resultText(fromMcpResult(raw));
        const why = /\[Sandbox: [^\]]*\]/.exec(blocked)?.[0] ?? "the sandbox blocked it";
        if (await askEscape(call, why, context.signal)) {
          const outside = await connection.call(tool, args, { ...options, meta: { [UNSANDBOXED_META_KEY]: true } });
          raw = { ...outside, content: [{ type: "text", text: blocked }, ...(outside.content ?? [])] };
        }
      }
      result = fromMcpResult(raw);
      meta = raw._meta;
    } catch (error) {
      if (error instanceof CallFailure)
        return { content: error.message, isError: true, data: { via: connection.name } };
      throw error;
    }
    const data: ToolCallData = { via: connection.name };
    const locations = locationsFor(tool, args);
    if (locations.length > 0) data.locations = locations;
    const diff = (tool === "write" || tool === "edit") && !result.isError ? diffFromMeta(meta) : undefined;
    if (diff) {
      data.content = [{ type: "diff", path: diff.path, oldText: diff.oldText, newText: diff.newText }];
      data.locations = [{ path: diff.path, line: firstChangedLine(diff.oldText, diff.newText) }];
    }
    return { ...result, data };
  }

  /** The MCP request timeout of a call: a terminal call's own `timeout` (seconds) plus a grace period, at least the default. */
  private timeoutFor(args: Record<string, unknown>): number {
    const base = this.options.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS;
    const own = args.timeout;
    return typeof own === "number" && Number.isFinite(own) && own > 0
      ? Math.max(base, own * 1000 + TIMEOUT_GRACE_MS)
      : base;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all(this.connections.map((c) => c.close()));
  }
}
