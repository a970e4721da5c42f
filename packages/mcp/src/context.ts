import type { LspDefaults, LspSettings } from "./lsp/languages.js";
import type { SandboxMode, SandboxPolicy } from "./sandbox/policy.js";

/**
 * Per-connection state shared by the tools of one MCP server instance. One instance serves one MCP connection
 * (stdio) or one MCP session (HTTP), so state kept here — the terminal's shell above all — is never shared
 * between two clients.
 */
export interface ToolContext {
  /** Working directory of the connection: where the shell starts and what relative-path hints refer to. */
  readonly cwd: string;
  /** Options the server was created with (tools read their own section). */
  readonly options: ServerOptions;
  /**
   * The session's sandbox policy as last told: `options.sandbox` at first, then whatever a tool call's
   * `_meta["crow/sandbox"]` says (the agent sends its current mode's policy with every call).
   */
  readonly sandbox: { current: SandboxPolicy };
  /** Registers cleanup to run when the connection closes (kill shells, drop caches). Runs in reverse order. */
  onClose(cleanup: () => void | Promise<void>): void;
}

/** Options of {@link createServer}. Every field is optional; the defaults are what `crow-mcp` uses. */
export interface ServerOptions {
  /** Working directory; defaults to `process.cwd()`. */
  cwd?: string;
  /** How the terminal's shell and the write/edit tools are confined (default: by `sandboxMode`). */
  sandbox?: SandboxPolicy;
  /** Without `sandbox`: confine each session by this mode in its own cwd (`--sandbox`; default "off"). */
  sandboxMode?: SandboxMode;
  /**
   * Paths hidden from every confined policy of every session, whatever the client's policy says: the unix socket's
   * own directory, so that a sandboxed shell can never reach the toolserver that confines it.
   */
  hideFromSandbox?: string[];
  /** Terminal tool settings. */
  terminal?: {
    /**
     * Seconds without new output before a running command returns with partial output (default 30; crow-mcp:
     * `--soft-timeout`, else CROW_TERMINAL_SOFT_TIMEOUT).
     */
    softTimeoutSeconds?: number;
  };
  /** Language servers checking write and edit (lsp/; `_meta["crow/lsp"]` of a socket session's initialize). */
  lsp?: LspSettings;
  /**
   * The process's own language-server settings, which no session replaces (crow-mcp's CROW_LSP, CROW_LSP_WAIT and
   * CROW_LSP_START_WAIT): `off` wins over `lsp`; the waits apply where `lsp` names none.
   */
  lspDefaults?: LspDefaults;
  /** Web tool settings. */
  web?: {
    /** SearXNG base URL (default http://localhost:2946; crow-mcp: SEARXNG_URL). */
    searxngUrl?: string;
    /** Timeout of web_search and web_fetch in milliseconds (default 20 s and 30 s; crow-mcp: CROW_WEB_TIMEOUT). */
    timeoutMs?: number;
  };
}
