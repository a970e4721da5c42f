import type { LspSettings } from "./lsp/languages.js";
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
    /** Seconds without new output before a running command returns with partial output (default 30). */
    softTimeoutSeconds?: number;
  };
  /** Language servers checking write and edit (lsp/; `_meta["crow/lsp"]` of a socket session's initialize). */
  lsp?: LspSettings;
  /** Web tool settings. */
  web?: {
    /** SearXNG base URL (default: env SEARXNG_URL, else http://localhost:2946). */
    searxngUrl?: string;
  };
}
