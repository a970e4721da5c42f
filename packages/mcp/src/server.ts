import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { ServerOptions, ToolContext } from "./context.js";
import { log } from "./log.js";
import { policyForFlag, withHidden } from "./sandbox/policy.js";
import { registerTools } from "./tools/index.js";
import { INSTRUCTIONS } from "./tools/list.js";
import { VERSION } from "./version.js";

export type { ServerOptions, ToolContext } from "./context.js";

/** A crow-mcp server not yet attached to a transport, with the means to release what its tools hold. */
export interface CrowMcpServer {
  readonly server: McpServer;
  /** Closes the MCP server and releases per-connection resources (shells and their children). Idempotent. */
  close(): Promise<void>;
}

/**
 * Creates one crow-mcp server instance, independent of any transport: stdio attaches one, HTTP creates one per
 * MCP session, tests may use an in-memory pair. Each instance owns its tools' state (one shell per instance).
 */
export function createServer(options: ServerOptions = {}): CrowMcpServer {
  const server = new McpServer(
    { name: "crow-mcp", version: VERSION },
    { instructions: INSTRUCTIONS, capabilities: { logging: {} } },
  );
  const cleanups: Array<() => void | Promise<void>> = [];
  const context: ToolContext = {
    cwd: options.cwd ?? process.cwd(),
    options,
    sandbox: {
      current: withHidden(
        options.sandbox ?? policyForFlag(options.sandboxMode ?? "off", options.cwd ?? process.cwd()),
        options.hideFromSandbox,
      ),
    },
    onClose: (cleanup) => {
      cleanups.push(cleanup);
    },
  };
  registerTools(server, context);

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      for (const cleanup of cleanups.reverse()) {
        try {
          await cleanup();
        } catch (error) {
          log.warn("cleanup failed", error);
        }
      }
      await server.close().catch((error: unknown) => log.warn("closing the MCP server failed", error));
    })();
    return closing;
  };
  return { server, close };
}
