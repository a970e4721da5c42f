import type { ToolCallRequest, ToolSet } from "@crow/core";
import type { LspSettings } from "@crow/mcp/lsp";
import type { SandboxPolicy } from "@crow/mcp/sandbox";
import type { ConfigMcpServer } from "../config/types.js";
import type { ToolProfile } from "./builtin/profile.js";
import type { ClientBridge, NameValue } from "./client-types.js";
import type { SessionUser } from "./elicitation.js";

export type { ClientBridge, ClientTerminal, CreateTerminalParams, NameValue } from "./client-types.js";

/** An MCP server as ACP's `session/new` passes it (stdio: no `type` field). Structurally ACP's `McpServer`. */
export type AcpMcpServer =
  | { type?: undefined; name: string; command: string; args: string[]; env: NameValue[] }
  | { type: "http"; name: string; url: string; headers: NameValue[] }
  | { type: "sse"; name: string; url: string; headers: NameValue[] };

/** Options of {@link createToolRouter}. */
export interface ToolRouterOptions {
  /** The session's working directory (absolute): cwd of the built-in crow-mcp and of stdio servers and terminals. */
  cwd: string;
  /** Servers passed in ACP `session/new` / `session/load` / `session/resume`. They win over config entries of the same name. */
  mcpServers?: readonly AcpMcpServer[];
  /** Servers from the config file's `mcpServers` dict. They win over the built-in of the same name (`crow-mcp`). */
  configServers?: Readonly<Record<string, ConfigMcpServer>>;
  /** Spawn the built-in crow-mcp of this installation as server `crow-mcp` (default true). */
  builtin?: boolean;
  /** False: no tool may wait to be loaded (`ToolSet.deferrable` says no to all); default: other servers' tools may. */
  deferTools?: boolean;
  /** The editor's fs and terminal, when the ACP client advertised them. */
  client?: ClientBridge;
  /** Per-call MCP request timeout in ms, reset by every progress notification (default 10 minutes). */
  callTimeoutMs?: number;
  /** How long a client-terminal command may run when the call gives no `timeout` (default 120 s). */
  clientTerminalTimeoutSeconds?: number;
  /** Receives what stdio servers write to stderr (their logs). Default: kept only for error messages. */
  onServerStderr?: (server: string, text: string) => void;
  /**
   * The session's current sandbox policy for the built-in crow-mcp (read at its `initialize` and at every call, so
   * a mode change applies to the next call). Default: unconfined.
   */
  sandbox?: () => SandboxPolicy;
  /** config.yaml's `language_servers` for the built-in crow-mcp (its `initialize`'s `_meta["crow/lsp"]`). */
  languageServers?: LspSettings;
  /** A problem with the sandbox to show when the session opens (no usable bubblewrap under `sandbox: auto`). */
  sandboxNotice?: string;
  /** A warning about the session's writable directories to show when it opens (they take in / or the home). */
  workspaceNotice?: string;
  /** The PATH folders the sandboxed shell cannot see, and why, to show when the session opens. */
  pathNotice?: string;
  /**
   * Asks the user whether a command the sandbox blocked may run once outside it (`why`: the sandbox's note);
   * resolves true to run it. Absent, or resolving false: the blocked result stands. The agent offers it in `ask` mode.
   */
  sandboxEscape?: (call: ToolCallRequest, why: string, signal: AbortSignal) => Promise<boolean>;
  /**
   * Where the servers' questions to the user go (MCP elicitation, see elicitation.ts). Absent: servers are told
   * Crow cannot ask (no elicitation capability).
   */
  user?: SessionUser;
  /**
   * Profiles of further tools by their name on their server (kind, display, the change they make), over crow-mcp's own
   * (tools/builtin): for hosts whose servers' tools deserve more than the generic display.
   */
  profiles?: ReadonlyMap<string, ToolProfile>;
}

/** How one MCP server's connection went. */
export interface ServerStatus {
  name: string;
  /** `socket`: the shared built-in crow-mcp (MCP lines on its private unix socket). */
  transport: "stdio" | "http" | "sse" | "socket";
  state: "connected" | "failed" | "closed";
  /** Why it failed (with `state: "failed"`), e.g. `command not found: foo`. */
  error?: string;
  /** Process id of a running stdio server (for monitoring, e.g. its memory). */
  pid?: number;
  /** Names of its tools as offered to the model (prefixed when they clash with another server's). */
  tools: string[];
}

/**
 * The tool router: the agent's {@link ToolSet} over every MCP server of a session plus the editor's fs/terminal. Its
 * tools carry their server's read-only claim, whether they run confined, their display (the diff their server
 * returned) and, for crow-mcp's write and edit, a dry-run proposal for permission questions.
 */
export interface ToolRouter extends ToolSet {
  /** Every configured server and how it is doing. */
  servers(): ServerStatus[];
  /**
   * One line per server that failed to start (`MCP server "x" failed to start: …`), empty when all are up. The ACP
   * layer should show these to the user; the session works with the remaining servers.
   */
  failures(): string[];
  /** Closes every MCP client and stops the spawned servers. Idempotent. */
  close(): Promise<void>;
}
