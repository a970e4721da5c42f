import path from "node:path";
import type {
  ExternalSkills,
  ResolvedTool,
  ToolCallRequest,
  ToolDefinition,
  ToolDisplay,
  ToolProgress,
  ToolResult,
  ToolRunContext,
} from "@crow/core";
import { compactSchema, filePathArg, findTool } from "@crow/core/internal";
import { DRY_RUN_META_KEY, diffFromMeta, isDryRun } from "@crow/mcp/edit";
import { LSP_META_KEY } from "@crow/mcp/lsp";
import { SANDBOX_META_KEY, UNSANDBOXED_META_KEY } from "@crow/mcp/sandbox";
import { type EditorCall, genericProfile, knownProfile, type ToolProfile } from "./builtin/index.js";
import { fromMcpResult, resultText } from "./content.js";
import { diffDisplay } from "./diff.js";
import { CallFailure, ServerConnection } from "./mcp-connection.js";
import { serverSkills } from "./mcp-skills.js";
import { BUILTIN_SERVER, collectServers } from "./servers.js";
import type { ServerStatus, ToolRouter, ToolRouterOptions } from "./types.js";

/** Default per-call MCP timeout; progress notifications (terminal output) reset it. */
const DEFAULT_CALL_TIMEOUT_MS = 10 * 60_000;
/** Grace beyond a terminal call's own `timeout` before the MCP request itself times out. */
const TIMEOUT_GRACE_MS = 60_000;
const DEFAULT_CLIENT_TERMINAL_TIMEOUT_SECONDS = 120;

/** Where a tool of the table runs. */
interface Route {
  connection: ServerConnection;
  /** The tool's name on its server. */
  tool: string;
  /** The server said the tool answers `_meta["crow/dryRun"]` calls without changing anything (crow-mcp's write, edit). */
  dryRun: boolean;
  /** What Crow knows of the tool (by its name on the server): its kind, display, editor route. */
  profile: ToolProfile;
  /** The tool is one of the built-in crow-mcp's (it may run through the editor). */
  builtin: boolean;
}

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
  /** The tool table: each offered name → its route and the resolved tool handed to the loop. */
  private routes = new Map<string, { route: Route; tool: ResolvedTool }>();
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
    const lsp = options.languageServers ? { [LSP_META_KEY]: options.languageServers } : {};
    const meta =
      sandbox || options.languageServers
        ? () => ({ ...(sandbox ? { [SANDBOX_META_KEY]: sandbox() } : {}), ...lsp })
        : undefined;
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
        const route: Route = {
          connection,
          tool: tool.name,
          dryRun: isDryRun(tool._meta),
          // Known by its name on the server; else generic, its kind read from the name it is offered as.
          profile: knownProfile(tool.name, this.options.profiles) ?? genericProfile(name),
          builtin: connection.name === BUILTIN_SERVER,
        };
        const parameters = compactSchema(tool.inputSchema as Record<string, unknown>);
        const definition: ToolDefinition = {
          type: "function",
          function: { name, description: tool.description ?? tool.title ?? "", parameters },
        };
        this.defs.push(definition);
        this.routes.set(name, { route, tool: this.resolved(name, definition, route, tool.annotations?.readOnlyHint) });
      }
    }
  }

  definitions(): ToolDefinition[] {
    this.build();
    return this.defs;
  }

  /** Other MCP servers' tools may wait to be loaded (unless configured off); crow-mcp's are Crow's own, always offered. */
  deferrable(name: string): boolean {
    if (this.options.deferTools === false) return false;
    this.build();
    const entry = this.routes.get(name);
    return entry !== undefined && !entry.route.builtin;
  }

  servers(): ServerStatus[] {
    this.build();
    return this.connections.map((c) => ({
      name: c.name,
      transport: c.spec.transport === "invalid" ? "stdio" : c.spec.transport === "shared" ? "socket" : c.spec.transport,
      state: c.state === "failed" ? "failed" : c.state === "connected" || c.state === "lost" ? "connected" : "closed",
      ...(c.error !== undefined && c.state === "failed" ? { error: c.error } : {}),
      ...(c.pid !== undefined ? { pid: c.pid } : {}),
      tools: [...this.routes].filter(([, r]) => r.route.connection === c).map(([name]) => name),
    }));
  }

  skills(signal?: AbortSignal): Promise<ExternalSkills> {
    return serverSkills(
      this.connections.map((c) => ({ name: c.name, client: c.mcp })),
      signal,
    );
  }

  failures(): string[] {
    return [
      ...(this.options.sandboxNotice ? [this.options.sandboxNotice] : []),
      ...(this.options.workspaceNotice ? [this.options.workspaceNotice] : []),
      ...(this.options.pathNotice ? [this.options.pathNotice] : []),
      ...this.connections
        .filter((c) => c.state === "failed")
        .map((c) => `MCP server "${c.name}" failed to start: ${c.error ?? "unknown error"}`),
    ];
  }

  /** The tool a model's name refers to: the table's own name, else tolerantly (`crow-mcp_read` → `read`). */
  resolve(name: string): ResolvedTool | undefined {
    this.build();
    const exact = this.routes.get(name);
    if (exact) return exact.tool;
    const found = findTool(this.defs, name);
    return found ? this.routes.get(found.function.name)?.tool : undefined;
  }

  /** The loop's handle on one tool of the table (made when the table is built, reused by every call). */
  private resolved(
    name: string,
    definition: ToolDefinition,
    route: Route,
    readOnly: boolean | undefined,
  ): ResolvedTool {
    const { profile } = route;
    return {
      definition,
      kind: profile.kind,
      ...(readOnly !== undefined ? { readOnly } : {}),
      // While the sandbox is on, commands run in crow-mcp's confined shell, never in the editor's terminal.
      ...(route.builtin && profile.sandboxed ? { confined: () => this.sandboxOn() } : {}),
      display: (args) => profile.display(name, args),
      propose: (args, signal) => this.propose(route, args, signal),
      run: (call, context) => this.execute(route, call, context),
    };
  }

  private async execute(route: Route, call: ToolCallRequest, context: ToolRunContext): Promise<ToolResult> {
    if (this.closed) return { content: "Error: the session's tools are closed.", isError: true };
    const editor = this.editorCall(route, call.args);
    if (editor) {
      // Writes through the editor's buffers get the sandbox's writable roots too (crow-mcp checks its own).
      const blocked = this.outsideWritableRoots(route, call.args);
      if (blocked) return { content: blocked, isError: true, display: { via: BUILTIN_SERVER } };
      const routed = await route.profile.editor?.run({
        ...editor,
        cwd: this.options.cwd,
        context,
        terminalTimeoutSeconds: this.options.clientTerminalTimeoutSeconds ?? DEFAULT_CLIENT_TERMINAL_TIMEOUT_SECONDS,
        onServer: () => this.callMcp(route, call.args, context),
      });
      if (routed) return routed;
    }
    return this.callMcp(route, call.args, context, call);
  }

  /** A built-in's call as its editor route sees it, when the editor offers anything; else undefined. */
  private editorCall(route: Route, args: Record<string, unknown>): EditorCall | undefined {
    const client = this.options.client;
    if (!client || !route.builtin) return undefined;
    return { client, args, policy: this.options.sandbox?.(), sandboxOn: this.sandboxOn() };
  }

  /**
   * What a write or edit would change, computed where it would run: in the editor's buffer when the call goes
   * through the editor, else by the server itself (a dry run, for tools that offer one: the agent reads no file, so
   * a remote toolserver's proposal is right too). Rejects with the call's own refusal when it would fail.
   */
  private async propose(
    route: Route,
    args: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<ToolDisplay | undefined> {
    if (this.closed || !route.profile.change) return undefined;
    const editor = this.editorCall(route, args);
    if (editor) {
      const blocked = this.outsideWritableRoots(route, args);
      if (blocked) throw new Error(blocked);
      const buffered = await route.profile.editor?.propose?.(editor);
      if (buffered) return { via: "client", ...diffDisplay(buffered) };
    }
    if (!route.dryRun) return undefined;
    const options = {
      signal,
      timeoutMs: this.timeoutFor(args),
      onProgress: () => {},
      meta: { [DRY_RUN_META_KEY]: true },
    };
    const raw = await route.connection.call(route.tool, args, options);
    const result = fromMcpResult(raw);
    if (result.isError) throw new Error(resultText(result));
    const diff = diffFromMeta(raw._meta);
    return diff ? { via: route.connection.name, ...diffDisplay(diff) } : undefined;
  }

  /** Whether the built-in's commands run confined now (the session's current policy is not "off"). */
  private sandboxOn(): boolean {
    return (this.options.sandbox?.().mode ?? "off") !== "off";
  }

  /** The sandbox's refusal of a file change through the editor (outside the writable roots, a hidden file), if any. */
  private outsideWritableRoots(route: Route, args: Record<string, unknown>): string | undefined {
    const change = route.profile.change;
    if (!change || !this.options.sandbox) return undefined;
    const file = filePathArg(args);
    if (file === undefined || !path.isAbsolute(file)) return undefined;
    return change.refusal(file, this.options.sandbox());
  }

  /**
   * Runs a call on its MCP server; the result's display is what the tool's profile makes of the answer (the file a
   * read or write touched, the diff its server returned).
   */
  private async callMcp(
    route: Route,
    args: Record<string, unknown>,
    context: ToolRunContext,
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
        return { content: error.message, isError: true, display: { via: connection.name } };
      throw error;
    }
    const shown = route.profile.resultDisplay?.(args, meta, result.isError === true);
    return { ...result, display: { via: connection.name, ...shown } };
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
