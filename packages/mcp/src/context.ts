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
  /** Registers cleanup to run when the connection closes (kill shells, drop caches). Runs in reverse order. */
  onClose(cleanup: () => void | Promise<void>): void;
}

/** Options of {@link createServer}. Every field is optional; the defaults are what `crow-mcp` uses. */
export interface ServerOptions {
  /** Working directory; defaults to `process.cwd()`. */
  cwd?: string;
  /** Terminal tool settings. */
  terminal?: {
    /** Seconds without new output before a running command returns with partial output (default 30). */
    softTimeoutSeconds?: number;
  };
  /** Web tool settings. */
  web?: {
    /** SearXNG base URL (default: env SEARXNG_URL, else http://localhost:2946). */
    searxngUrl?: string;
  };
}
